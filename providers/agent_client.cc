#include "agent_client.h"

#include "etwh/child_process.h"
#include "etwh/stop_signals.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#ifndef _WIN32
#include <signal.h>
#endif

namespace etwh {
namespace {

namespace asio = boost::asio;
using nlohmann::json;

// After the agent has exited, how long its remaining output may take to arrive. Bounded because
// a grandchild (the etwrt broker it may have started) can hold the pipes open indefinitely.
constexpr auto kDrainGrace = std::chrono::milliseconds(500);

// How often a wait for the agent looks whether SIGINT/SIGTERM asked the driver to stop.
constexpr auto kStopPoll = std::chrono::milliseconds(50);

// Waits on `changed` until `done()` or `deadline`, in slices, so that a stop request ends the
// wait (StopRequested) instead of the timeout.
template <typename Done>
bool wait_unless_stopped(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
                         std::chrono::steady_clock::time_point deadline, Done done) {
  while (!done()) {
    if (stop_requested()) throw StopRequested();
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    changed.wait_until(lock, std::min(deadline, now + kStopPoll), done);
  }
  return true;
}

// Diagnostics are kept, but not without bound: an agent stuck in a loop writing to stderr
// must not exhaust the driver's memory.
constexpr std::size_t kStderrCap = 4 << 20;

// No protocol line comes near this; an agent writing that much without a newline is broken.
constexpr std::size_t kLineCap = 64 << 20;

std::string describe(const AgentExit& e) {
  return ExitStatus{e.exit_code, e.signaled, e.signal}.describe();
}

}  // namespace

struct AgentProcess::Impl {
  std::string name;
  asio::io_context io;
  std::optional<ChildProcess> process;  // its pipes and exit are served by `io`
  int pid = 0;
  std::thread io_thread;

  // Shared with callers; guarded by mutex, announced through changed.
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::map<std::int64_t, json> replies;
  std::set<std::int64_t> abandoned;  // timed-out ids whose late replies are dropped
  std::vector<json> events;
  std::map<std::string, std::size_t> event_counts;  // by "event" kind
  std::string stderr_text;
  std::size_t stderr_dropped = 0;
  std::string protocol_error;
  bool stdout_closed = false;
  bool stderr_closed = false;
  std::optional<AgentExit> exit;
  bool finished = false;  // exited, and its output read (or the drain grace is over)
  std::int64_t next_id = 1;

  // Touched by the io thread only.
  std::array<char, 8192> out_buffer{};
  std::array<char, 4096> err_buffer{};
  std::string out_partial;
  std::deque<std::string> write_queue;
  bool writing = false;
  asio::steady_timer drain_timer{io};

  void start_io();
  void read_stdout();
  void read_stderr();
  void take_line(const std::string& line);
  void write_next();
  void on_exit(const std::optional<ExitStatus>& status);
  void finish();        // with mutex held
  void maybe_finish();  // with mutex held: finishes once exited and both streams are read
};

void AgentProcess::Impl::start_io() {
  read_stdout();
  read_stderr();
  process->async_wait([this](std::optional<ExitStatus> status) { on_exit(status); });
  io_thread = std::thread([this] {
#ifndef _WIN32
    // Writing to an agent that died raises SIGPIPE in the writing thread; blocked here, the
    // write just fails and the exit is reported through the process status instead.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
#endif
    io.run();
  });
}

void AgentProcess::Impl::read_stdout() {
  process->stdout_pipe().async_read_some(
      asio::buffer(out_buffer), [this](boost::system::error_code ec, std::size_t n) {
        out_partial.append(out_buffer.data(), n);
        std::size_t start = 0;
        for (std::size_t nl; (nl = out_partial.find('\n', start)) != std::string::npos;
             start = nl + 1) {
          take_line(out_partial.substr(start, nl - start));
        }
        out_partial.erase(0, start);
        if (out_partial.size() > kLineCap) {
          std::lock_guard<std::mutex> lock(mutex);
          if (protocol_error.empty()) {
            protocol_error =
                "agent wrote more than " + std::to_string(kLineCap) + " bytes without a newline";
          }
          out_partial.clear();
          changed.notify_all();
        }
        if (!ec) {
          read_stdout();
          return;
        }
        if (!out_partial.empty()) take_line(std::exchange(out_partial, {}));
        std::lock_guard<std::mutex> lock(mutex);
        stdout_closed = true;
        maybe_finish();
        changed.notify_all();
      });
}

void AgentProcess::Impl::read_stderr() {
  process->stderr_pipe().async_read_some(
      asio::buffer(err_buffer), [this](boost::system::error_code ec, std::size_t n) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          std::size_t keep = std::min(n, kStderrCap - std::min(kStderrCap, stderr_text.size()));
          stderr_text.append(err_buffer.data(), keep);
          stderr_dropped += n - keep;
          if (ec) {
            stderr_closed = true;
            maybe_finish();
          }
        }
        if (!ec) read_stderr();
      });
}

void AgentProcess::Impl::take_line(const std::string& raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) return;
  json message = json::parse(line, nullptr, false);
  std::lock_guard<std::mutex> lock(mutex);
  if (message.is_object() && message.contains("event")) {
    const json& kind = message["event"];
    ++event_counts[kind.is_string() ? kind.get<std::string>() : kind.dump()];
    events.push_back(std::move(message));
  } else if (message.is_object() && message.contains("id") && message["id"].is_number_integer()) {
    auto id = message["id"].get<std::int64_t>();
    if (abandoned.erase(id) == 0) replies[id] = std::move(message);
  } else if (protocol_error.empty()) {
    protocol_error =
        message.is_object() && message.contains("error")
            ? "agent refused a request it could not attribute: " + message["error"].dump()
            : "agent wrote a line that is not a protocol message: " + line.substr(0, 200);
  }
  changed.notify_all();
}

void AgentProcess::Impl::write_next() {
  if (writing || write_queue.empty()) return;
  writing = true;
  asio::async_write(process->stdin_pipe(), asio::buffer(write_queue.front()),
                    [this](boost::system::error_code ec, std::size_t) {
                      writing = false;
                      if (ec) {
                        // The agent's stdin is gone: it has ended or is ending; the exit
                        // status, not this error, says what happened.
                        write_queue.clear();
                        return;
                      }
                      write_queue.pop_front();
                      write_next();
                    });
}

void AgentProcess::Impl::on_exit(const std::optional<ExitStatus>& status) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!status) {
    exit = AgentExit{-1, false, 0};
    if (protocol_error.empty()) protocol_error = "cannot wait for the agent";
  } else {
    exit = AgentExit{status->code, status->signaled, status->signal};
  }
  maybe_finish();
  if (!finished) {
    drain_timer.expires_after(kDrainGrace);
    drain_timer.async_wait([this](boost::system::error_code) {
      std::lock_guard<std::mutex> lock(mutex);
      finish();
    });
  }
  changed.notify_all();
}

void AgentProcess::Impl::maybe_finish() {
  if (exit && stdout_closed && stderr_closed) finish();
}

void AgentProcess::Impl::finish() {
  finished = true;
  changed.notify_all();
}

AgentProcess::AgentProcess(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<AgentProcess> AgentProcess::spawn(const std::filesystem::path& exe,
                                                  const std::string& name,
                                                  const std::vector<std::string>& args,
                                                  const std::map<std::string, std::string>& env,
                                                  std::chrono::milliseconds ready_timeout) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  Impl& i = *impl;

  ChildOptions options;
  options.executable = exe;
  options.args = args;
  options.env = env;
  try {
    i.process.emplace(i.io, options);
  } catch (const ChildProcessError& e) {
    throw AgentError(AgentError::Kind::kSpawn, "agent '" + name + "': " + e.what());
  }
  i.pid = i.process->pid();
  i.start_io();

  std::unique_ptr<AgentProcess> agent(new AgentProcess(std::move(impl)));
  if (!agent->wait_for_events("ready", 1, ready_timeout)) {
    std::string why;
    if (auto e = agent->wait_exit(std::chrono::milliseconds(0))) {
      why = "it " + describe(*e) + " before it was ready";
    } else {
      why = "it was not ready within " + std::to_string(ready_timeout.count()) + " ms";
    }
    throw AgentError(AgentError::Kind::kSpawn, "agent '" + name + "' (" + exe.string() + "): " +
                                                   why + "; stderr: " + agent->stderr_text());
  }
  return agent;
}

AgentProcess::~AgentProcess() {
  if (!wait_exit(std::chrono::milliseconds(0))) {
    send({{"op", "exit"}});
    if (!wait_exit(std::chrono::seconds(1))) {
      kill();
      wait_exit(std::chrono::seconds(5));
    }
  }
  impl_->io.stop();
  if (impl_->io_thread.joinable()) impl_->io_thread.join();
}

const std::string& AgentProcess::name() const { return impl_->name; }

int AgentProcess::pid() const { return impl_->pid; }

void AgentProcess::send(json request) {
  if (!request.is_object()) {
    throw AgentError(AgentError::Kind::kProtocol,
                     "agent '" + impl_->name + "': a request must be a JSON object");
  }
  if (!request.contains("id")) {
    // Nobody waits for this reply (if the op has one): it is dropped when it arrives.
    std::lock_guard<std::mutex> lock(impl_->mutex);
    request["id"] = impl_->next_id;
    impl_->abandoned.insert(impl_->next_id++);
  }
  std::string line = request.dump() + "\n";
  Impl* impl = impl_.get();
  asio::post(impl->io, [impl, line = std::move(line)]() mutable {
    impl->write_queue.push_back(std::move(line));
    impl->write_next();
  });
}

json AgentProcess::call(json request, std::chrono::milliseconds timeout) {
  Impl& i = *impl_;
  if (!request.is_object() || !request.contains("op")) {
    throw AgentError(AgentError::Kind::kProtocol,
                     "agent '" + i.name + "': a request needs an \"op\"");
  }
  std::string op =
      request["op"].is_string() ? request["op"].get<std::string>() : request["op"].dump();
  std::int64_t id;
  {
    std::lock_guard<std::mutex> lock(i.mutex);
    id = i.next_id++;
  }
  request["id"] = id;
  send(std::move(request));

  std::unique_lock<std::mutex> lock(i.mutex);
  wait_unless_stopped(i.changed, lock, std::chrono::steady_clock::now() + timeout, [&] {
    return i.replies.count(id) != 0 || i.finished || !i.protocol_error.empty();
  });
  auto it = i.replies.find(id);
  if (it != i.replies.end()) {
    json reply = std::move(it->second);
    i.replies.erase(it);
    if (reply.value("ok", false) != true) {
      std::string error = reply.contains("error") ? reply["error"].dump() : "(no error given)";
      throw AgentError(AgentError::Kind::kProtocol,
                       "agent '" + i.name + "' refused op '" + op + "': " + error);
    }
    return reply;
  }
  if (!i.protocol_error.empty()) {
    throw AgentError(AgentError::Kind::kProtocol, "agent '" + i.name + "': " + i.protocol_error);
  }
  if (i.finished) {
    std::string text =
        "agent '" + i.name + "' " + describe(*i.exit) + " before replying to op '" + op + "'";
    if (!i.stderr_text.empty()) text += "; stderr: " + i.stderr_text;
    throw AgentError(AgentError::Kind::kCrashed, text);
  }
  i.abandoned.insert(id);
  throw AgentError(AgentError::Kind::kTimeout, "agent '" + i.name + "' did not reply to op '" + op +
                                                   "' within " + std::to_string(timeout.count()) +
                                                   " ms");
}

std::vector<json> AgentProcess::events() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->events;
}

bool AgentProcess::wait_for_events(const std::string& kind, std::size_t count,
                                   std::chrono::milliseconds timeout) {
  Impl& i = *impl_;
  auto reached = [&] {
    auto it = i.event_counts.find(kind);
    return (it == i.event_counts.end() ? 0 : it->second) >= count;
  };
  std::unique_lock<std::mutex> lock(i.mutex);
  wait_unless_stopped(i.changed, lock, std::chrono::steady_clock::now() + timeout,
                      [&] { return reached() || i.finished; });
  return reached();
}

std::optional<AgentExit> AgentProcess::wait_exit(std::chrono::milliseconds timeout) {
  Impl& i = *impl_;
  std::unique_lock<std::mutex> lock(i.mutex);
  i.changed.wait_until(lock, std::chrono::steady_clock::now() + timeout,
                       [&] { return i.exit.has_value(); });
  return i.exit;
}

std::string AgentProcess::stderr_text() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::string text = impl_->stderr_text;
  if (impl_->stderr_dropped > 0) {
    text += "\n[" + std::to_string(impl_->stderr_dropped) + " more bytes of stderr dropped]";
  }
  return text;
}

void AgentProcess::kill() {
  Impl* impl = impl_.get();
  // Run on the io thread, which alone reaps the process: the pid cannot have been reused
  // before ChildProcess knows it was reaped.
  asio::post(impl->io, [impl] { impl->process->kill(); });
}

}  // namespace etwh
