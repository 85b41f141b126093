// etwh::ChildProcess: the one place that starts child processes (agents, stress writers, the
// self-test's runs of etwh), over Boost.Process v2. Whatever the caller, a child gets:
//   - stdio as pipes, the null device, the parent's own, or (stdout and stderr) a log file;
//   - no other descriptor of the parent: every pipe end this class makes is close-on-exec in
//     the parent, and the child marks every descriptor above stderr close-on-exec before exec,
//     so a child never holds its own or a sibling's pipe ends and EOF always reaches it;
//   - Linux: a parent-death signal (SIGKILL) set before exec, so it does not outlive the driver
//     even when the driver is SIGKILLed. The kernel sends it when the THREAD that spawned the
//     child exits, not the process: spawn from a thread that lives as long as the child should
//     (the main thread, or a worker that waits for the child);
//   - Windows: membership in a job object that kills its processes when the parent's last
//     handle to it closes, i.e. when the parent ends.
//
//   boost::asio::io_context io;
//   etwh::ChildOptions o;
//   o.executable = "/bin/sh";
//   o.args = {"-c", "exit 3"};
//   etwh::ChildProcess child(io, o);
//   etwh::ExitStatus s = child.wait();   // s.code == 3
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/writable_pipe.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

// A child that could not be started: the message names the executable and the reason.
class ChildProcessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How a child ended.
struct ExitStatus {
  int code = 0;           // its exit code, when !signaled (Windows: always)
  bool signaled = false;  // POSIX: ended by a signal
  int signal = 0;         // that signal, when signaled

  bool success() const { return !signaled && code == 0; }
  // "exited with code 3", "killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

// Where one of the child's standard streams goes.
enum class Stdio {
  kPipe,     // a pipe to or from the parent (stdin_pipe() and friends)
  kNull,     // the null device
  kInherit,  // the parent's own stream
};

struct ChildOptions {
  std::filesystem::path executable;  // run as is: no search of PATH
  std::vector<std::string> args;     // without argv[0]
  // Added to the parent's environment; a name given here overrides the parent's value.
  std::map<std::string, std::string> env;
  Stdio stdin_mode = Stdio::kPipe;
  Stdio stdout_mode = Stdio::kPipe;
  Stdio stderr_mode = Stdio::kPipe;
  // When set, stdout and stderr both go to this file (created or truncated) and their modes
  // above are ignored.
  std::filesystem::path log_file;
  // POSIX: the child leads a new process group, and terminate()/kill() signal the whole group
  // (whatever it started that stayed in the group ends with it). Ignored on Windows.
  bool own_process_group = false;
};

class ChildProcess {
 public:
  // Starts the child; returns once it runs the executable. `io` serves the pipes and
  // async_wait; it must not be running in another thread during this call (Boost.Process
  // notifies it of the fork). Throws ChildProcessError when the child cannot be started.
  ChildProcess(boost::asio::io_context& io, const ChildOptions& options);

  // Kills (with its group, if it has one) and reaps a child still running.
  ~ChildProcess();

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const;

  // The parent's ends of the pipes; only for streams whose mode is Stdio::kPipe.
  boost::asio::writable_pipe& stdin_pipe();
  boost::asio::readable_pipe& stdout_pipe();
  boost::asio::readable_pipe& stderr_pipe();

  // The exit status if the child has ended (and reaps it), nullopt while it runs.
  std::optional<ExitStatus> try_wait();
  // Waits up to `timeout` for the child to end.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // Waits for the child to end.
  ExitStatus wait();
  // Calls `done` on `io` once the child has ended; `done` gets nullopt if waiting failed.
  // Do not mix with the waits above, and call kill()/terminate() from `io`'s thread then.
  void async_wait(std::function<void(std::optional<ExitStatus>)> done);

  // Asks the child to end (SIGTERM; Windows: TerminateProcess). No-op once it was reaped.
  void terminate();
  // Ends the child now (SIGKILL; Windows: TerminateProcess). No-op once it was reaped.
  void kill();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace etwh
