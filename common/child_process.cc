#include "etwh/child_process.h"

#include <boost/asio/connect_pipe.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
// Boost 1.81's header-only mode leaves process_environment::on_setup undefined, so the library
// is compiled here, once in the program (BOOST_PROCESS_V2_SEPARATE_COMPILATION is set on
// etwh_common): nothing else may include src.hpp.
#include <boost/process/v2/src.hpp>

#include <cstdio>
#include <thread>

#ifdef _WIN32
#include <io.h>
#include <windows.h>
#else
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

namespace etwh {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

ExitStatus decode_status(bp::native_exit_code_type status) {
  ExitStatus e;
#ifdef _WIN32
  e.code = static_cast<int>(status);
#else
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
  } else {
    e.code = status;
  }
#endif
  return e;
}

std::vector<std::string> child_environment(const std::map<std::string, std::string>& added) {
  std::vector<std::string> environment;
  for (const auto& kv : bp::environment::current()) {
    std::string key = kv.key().string();
    if (added.count(key) == 0) environment.push_back(key + "=" + kv.value().string());
  }
  for (const auto& [key, value] : added) environment.push_back(key + "=" + value);
  return environment;
}

#ifndef _WIN32

// What the child does between fork and exec, after process_stdio has set up fds 0-2. Only
// async-signal-safe calls: the parent may have other threads.
struct ChildSetup {
  pid_t parent = 0;
  bool own_process_group = false;

  template <typename Launcher, typename Path, typename Argv>
  bp::error_code on_exec_setup(Launcher&, const Path&, Argv&) const {
    auto fail = [] { return bp::error_code(errno, bp::system_category()); };
    if (own_process_group && ::setpgid(0, 0) != 0) return fail();
#ifdef __linux__
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return fail();
    // The parent may have died before the signal was armed: then nobody will send it.
    if (::getppid() != parent) return bp::error_code(ESRCH, bp::system_category());
#endif
    // The parent's signal mask and ignored signals would otherwise carry over the exec.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM}) ::signal(sig, SIG_DFL);
    // dup2 onto the same number keeps close-on-exec: stdio must survive the exec.
    for (int fd = 0; fd <= 2; ++fd) ::fcntl(fd, F_SETFD, 0);
    close_others_on_exec();
    return {};
  }

  // Marks every descriptor above stderr close-on-exec, Boost's exec-error pipe included (it
  // is already). Boost 1.81 closes descriptors too, but skips those between two kept ones.
  static void close_others_on_exec() {
#if defined(__linux__) && defined(SYS_close_range)
    constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC, Linux 5.11
    if (::syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec) == 0) return;
#endif
    rlimit limit{};
    int top = 65536;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < static_cast<rlim_t>(top)) {
      top = static_cast<int>(limit.rlim_cur);
    }
    for (int fd = 3; fd < top; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
};

// A pipe whose two ends are close-on-exec from the start, so that no child started meanwhile
// by another thread (or by a library, like etwrt's broker) inherits them.
void make_pipe(int ends[2], const std::string& what) {
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw ChildProcessError(what + ": cannot create a pipe: " + std::strerror(errno));
  }
}

// Closes the fds it holds when it goes out of scope: the child's ends, once it has them.
struct FdCloser {
  std::vector<int> fds;
  ~FdCloser() {
    for (int fd : fds) ::close(fd);
  }
};

#else

// Every child joins this job; the job kills them all when its last handle closes, which is
// when this process ends. Created once, deliberately never closed.
HANDLE kill_on_close_job() {
  static HANDLE job = [] {
    HANDLE h = CreateJobObjectW(nullptr, nullptr);
    if (h == nullptr) return h;
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION info{};
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    if (!SetInformationJobObject(h, JobObjectExtendedLimitInformation, &info, sizeof info)) {
      CloseHandle(h);
      return HANDLE{nullptr};
    }
    return h;
  }();
  return job;
}

// One of the child's streams: the log file, its end of a pipe, the null device or ours.
// (Boost 1.81's FILE* constructor does not compile for Windows; its default one is our own.)
template <typename Binding, typename Pipe>
Binding bind_stream(Stdio mode, Pipe& child_end, std::FILE* log) {
  if (log != nullptr) return Binding(reinterpret_cast<HANDLE>(_get_osfhandle(_fileno(log))));
  if (mode == Stdio::kPipe) return Binding(child_end);
  if (mode == Stdio::kNull) return Binding(nullptr);
  return Binding();
}

#endif

}  // namespace

std::string ExitStatus::describe() const {
  if (!signaled) return "exited with code " + std::to_string(code);
  std::string text = "killed by signal " + std::to_string(signal);
#ifndef _WIN32
  if (const char* abbrev = sigabbrev_np(signal)) text += std::string(" (SIG") + abbrev + ")";
#endif
  return text;
}

struct ChildProcess::Impl {
  explicit Impl(asio::io_context& io) : stdin_pipe(io), stdout_pipe(io), stderr_pipe(io) {}

  asio::writable_pipe stdin_pipe;
  asio::readable_pipe stdout_pipe;
  asio::readable_pipe stderr_pipe;
  std::optional<bp::process> process;
  int pid = 0;
  bool own_process_group = false;
  std::optional<ExitStatus> exit;  // set once the child was reaped

  void send(int sig);
};

void ChildProcess::Impl::send([[maybe_unused]] int sig) {
  // Once reaped, the pid may belong to someone else.
  if (exit || !process) return;
#ifdef _WIN32
  TerminateProcess(process->native_handle(), 1);
#else
  ::kill(own_process_group ? -pid : pid, sig);
#endif
}

#ifndef _WIN32

ChildProcess::ChildProcess(asio::io_context& io, const ChildOptions& o)
    : impl_(std::make_unique<Impl>(io)) {
  const std::string what = o.executable.string();
  FdCloser child_ends;
  // Each stream: the fd the child gets, and the parent's end when it is a pipe.
  auto stream = [&](Stdio mode, int own, bool input, auto& parent_end) -> int {
    if (mode == Stdio::kInherit) return own;
    if (mode == Stdio::kNull) {
      const int fd = ::open("/dev/null", (input ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
      if (fd < 0) throw ChildProcessError(what + ": cannot open /dev/null");
      child_ends.fds.push_back(fd);
      return fd;
    }
    int ends[2];
    make_pipe(ends, what);
    child_ends.fds.push_back(input ? ends[0] : ends[1]);
    parent_end.assign(input ? ends[1] : ends[0]);
    return input ? ends[0] : ends[1];
  };
  const int in = stream(o.stdin_mode, 0, true, impl_->stdin_pipe);
  int out, err;
  if (!o.log_file.empty()) {
    out = err = ::open(o.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
      throw ChildProcessError(what + ": cannot open the log " + o.log_file.string() + ": " +
                              std::strerror(errno));
    }
    child_ends.fds.push_back(out);
  } else {
    out = stream(o.stdout_mode, 1, false, impl_->stdout_pipe);
    err = stream(o.stderr_mode, 2, false, impl_->stderr_pipe);
  }

  impl_->own_process_group = o.own_process_group;
  try {
    impl_->process.emplace(io, o.executable.string(), o.args, bp::process_stdio{in, out, err},
                           bp::process_environment(child_environment(o.env)),
                           ChildSetup{::getpid(), o.own_process_group});
  } catch (const std::exception& e) {
    throw ChildProcessError(what + ": cannot start: " + e.what());
  }
  impl_->pid = static_cast<int>(impl_->process->id());
}

#else

ChildProcess::ChildProcess(asio::io_context& io, const ChildOptions& o)
    : impl_(std::make_unique<Impl>(io)) {
  const std::string what = o.executable.string();
  // The child's ends live only until the launch, or the parent would never see EOF.
  asio::readable_pipe child_in(io);
  asio::writable_pipe child_out(io), child_err(io);
  std::FILE* log = nullptr;
  if (!o.log_file.empty()) {
    log = _wfopen(o.log_file.wstring().c_str(), L"wb");
    if (log == nullptr) {
      throw ChildProcessError(what + ": cannot open the log " + o.log_file.string());
    }
  }
  try {
    if (o.stdin_mode == Stdio::kPipe) asio::connect_pipe(child_in, impl_->stdin_pipe);
    if (o.stdout_mode == Stdio::kPipe && !log) asio::connect_pipe(impl_->stdout_pipe, child_out);
    if (o.stderr_mode == Stdio::kPipe && !log) asio::connect_pipe(impl_->stderr_pipe, child_err);
    using bp::detail::process_input_binding, bp::detail::process_output_binding,
        bp::detail::process_error_binding;
    // Wine 8.0's CreateProcess now and then fails with ERROR_INTERNAL_ERROR for a launch that
    // succeeds when made again (seen once in CI, in the launch of one case's agent): up to two more
    // attempts, said on stderr. Any other failure, or a third one, is the harness error.
    for (int attempt = 1;; ++attempt) {
      try {
        impl_->process.emplace(
            io, o.executable.string(), o.args,
            bp::process_stdio{bind_stream<process_input_binding>(o.stdin_mode, child_in, nullptr),
                              bind_stream<process_output_binding>(o.stdout_mode, child_out, log),
                              bind_stream<process_error_binding>(o.stderr_mode, child_err, log)},
            bp::process_environment(child_environment(o.env)));
        break;
      } catch (const boost::system::system_error& e) {
        if (e.code().value() != ERROR_INTERNAL_ERROR || attempt == 3) throw;
        std::fprintf(stderr, "etwh: %s: launch attempt %d failed (%s); trying again\n",
                     what.c_str(), attempt, e.what());
        Sleep(100);
      }
    }
  } catch (const std::exception& e) {
    if (log) std::fclose(log);
    throw ChildProcessError(what + ": cannot start: " + e.what());
  }
  if (log) std::fclose(log);
  impl_->pid = static_cast<int>(impl_->process->id());
  if (HANDLE job = kill_on_close_job()) {
    AssignProcessToJobObject(job, impl_->process->native_handle());
  }
}

#endif

ChildProcess::~ChildProcess() {
  if (!impl_->process || impl_->exit) return;
  impl_->send(
#ifdef _WIN32
      0
#else
      SIGKILL
#endif
  );
  wait();
}

int ChildProcess::pid() const { return impl_->pid; }

asio::writable_pipe& ChildProcess::stdin_pipe() { return impl_->stdin_pipe; }
asio::readable_pipe& ChildProcess::stdout_pipe() { return impl_->stdout_pipe; }
asio::readable_pipe& ChildProcess::stderr_pipe() { return impl_->stderr_pipe; }

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (impl_->exit) return impl_->exit;
  bp::error_code ec;
  if (impl_->process->running(ec)) return std::nullopt;
  // An error means the child is not ours to wait for any more (reaped elsewhere): it ended.
  impl_->exit = ec ? ExitStatus{-1, false, 0} : decode_status(impl_->process->native_exit_code());
  return impl_->exit;
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    if (auto e = try_wait()) return e;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

ExitStatus ChildProcess::wait() {
  if (impl_->exit) return *impl_->exit;
  bp::error_code ec;
  impl_->process->wait(ec);
  impl_->exit = ec ? ExitStatus{-1, false, 0} : decode_status(impl_->process->native_exit_code());
  return *impl_->exit;
}

void ChildProcess::async_wait(std::function<void(std::optional<ExitStatus>)> done) {
  Impl* impl = impl_.get();
  impl->process->async_wait([impl, done = std::move(done)](bp::error_code ec, int) {
    if (ec) {
      done(std::nullopt);
      return;
    }
    impl->exit = decode_status(impl->process->native_exit_code());
    done(impl->exit);
  });
}

void ChildProcess::terminate() {
#ifdef _WIN32
  impl_->send(0);
#else
  impl_->send(SIGTERM);
#endif
}

void ChildProcess::kill() {
#ifdef _WIN32
  impl_->send(0);
#else
  impl_->send(SIGKILL);
#endif
}

}  // namespace etwh
