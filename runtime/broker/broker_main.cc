// etwrt-broker: ETW's kernel part for etwrt. Owns the sessions, the provider registrations of
// every connected process and the enable state (BrokerState, broker_state.h); this file is its
// event loop: the listening socket, one connection per peer, frames in (decoded and checked by
// requests.h) and out, signals, the idle exit. One broker per ETWRT_HOME (flock on
// broker.lock); single-threaded poll loop; exits when it has had no session and no client for a
// while.
#include "broker_state.h"
#include "etwrt_os.h"
#include "requests.h"
#include "trace_properties.h"
#include "wire.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace etwrt {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

// The process whose end ends this broker (ETWRT_BROKER_OWNER_PID): a pidfd to poll, or
// without pidfd_open its pid to probe each loop.
struct Owner {
  pid_t pid = 0;  // 0: no owner, the broker lives until idle or a signal.
  int exit_fd = -1;
  bool gone() const {
    if (pid == 0) return false;
    if (exit_fd >= 0) {
      pollfd p{exit_fd, POLLIN, 0};
      return ::poll(&p, 1, 0) == 1;
    }
    return ::kill(pid, 0) != 0 && errno == ESRCH;
  }
};

class EventLoop {
 public:
  EventLoop(int listen_fd, std::chrono::milliseconds idle, Owner owner, std::size_t max_sessions)
      : listen_fd_(listen_fd), idle_(idle), owner_(owner), state_(max_sessions) {}

  void run();

 private:
  void accept_peer();
  void read_peer(int fd);
  void handle_frame(int fd, const json& frame);
  void answer_unrepresentable(int fd);
  // Sends what the state machine yielded; a peer that cannot take a frame is dropped (which
  // may yield more, sent in turn).
  void flush();
  void drop_peer(int fd);

  int listen_fd_;
  std::chrono::milliseconds idle_;
  Owner owner_;
  std::map<int, FrameReader> readers_;  // By connection fd.
  broker::BrokerState state_;
};

void EventLoop::run() {
  auto idle_since = Clock::now();
  auto last_sweep = Clock::now();
  while (g_stop == 0) {
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    // The owner's pidfd (or an unused slot): readable when the owner ended.
    fds.push_back({owner_.exit_fd, POLLIN, 0});
    for (const auto& [fd, reader] : readers_) fds.push_back({fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 500);
    if (ready < 0 && errno != EINTR) break;
    if (owner_.gone()) {
      std::fprintf(stderr, "etwrt-broker: owner process %d ended; stopping every session\n",
                   static_cast<int>(owner_.pid));
      break;
    }
    if (ready > 0) {
      if ((fds[0].revents & POLLIN) != 0) accept_peer();
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents != 0) read_peer(fds[i].fd);
      }
    }
    if (Clock::now() - last_sweep > std::chrono::seconds(1)) {
      // Writers that died without their socket closing (forked children): hand their buffers on.
      state_.recover_pools();
      last_sweep = Clock::now();
    }
    if (!state_.idle()) {
      idle_since = Clock::now();
    } else if (Clock::now() - idle_since > idle_) {
      break;
    }
  }
  // Ending on a signal: the sessions end as if stopped, so their consumers return (the
  // "stopped" frames go out before the sockets close).
  state_.stop_all_sessions();
  flush();
}

void EventLoop::accept_peer() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  bool allowed = false;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    allowed = cred.uid == ::geteuid() || cred.uid == 0;
  }
  // A peer that stops reading must not stall every other client forever.
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  readers_[fd];
  state_.connect(fd, allowed, allowed ? static_cast<std::uint32_t>(cred.pid) : 0);
}

void EventLoop::read_peer(int fd) {
  if (!readers_.contains(fd)) return;
  char buffer[65536];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    drop_peer(fd);
    return;
  }
  if (n < 0) return;
  readers_.at(fd).append(buffer, static_cast<std::size_t>(n));
  for (;;) {
    auto found = readers_.find(fd);
    if (found == readers_.end()) return;
    bool corrupt = false;
    bool out_of_range = false;
    auto frame = found->second.next(corrupt, &out_of_range);
    if (out_of_range) {
      answer_unrepresentable(fd);
      continue;
    }
    if (corrupt) {
      std::fprintf(stderr, "etwrt-broker: corrupt frame from fd %d, dropping it\n", fd);
      drop_peer(fd);
      return;
    }
    if (!frame) return;
    handle_frame(fd, *frame);
  }
}

// A request that is JSON but holds a number no double holds: answered, not dropped, as every
// JSON request is (its id cannot be read back, so the answer's id is null). Another user gets
// the bare refusal.
void EventLoop::answer_unrepresentable(int fd) {
  json reply = {{"id", nullptr}, {"status", ERROR_ACCESS_DENIED}};
  if (state_.allowed(fd)) {
    std::fprintf(stderr, "etwrt-broker: refused a request from fd %d: a number out of range\n", fd);
    reply["status"] = ERROR_INVALID_PARAMETER;
    reply["reason"] = "a number out of range (beyond a double): the request cannot be read";
  }
  if (!send_frame(fd, reply)) drop_peer(fd);
}

void EventLoop::handle_frame(int fd, const json& frame) {
  // Another user learns nothing from the broker, not even what is wrong with a request: the
  // access check comes before the decoding that would say it.
  if (!state_.allowed(fd)) {
    const json id = frame.is_object() ? frame.value("id", json()) : json();
    if (!send_frame(fd, {{"id", id}, {"status", ERROR_ACCESS_DENIED}})) drop_peer(fd);
    return;
  }
  const broker::Decoded decoded = broker::decode_request(frame);
  if (const auto* bad = std::get_if<broker::DecodeError>(&decoded)) {
    std::fprintf(stderr, "etwrt-broker: refused a request from fd %d: %s\n", fd,
                 bad->reason.c_str());
    if (!send_frame(fd, {{"id", bad->id}, {"status", bad->status}, {"reason", bad->reason}})) {
      drop_peer(fd);
    }
    return;
  }
  bool faulted = false;
  try {
    state_.handle(fd, std::get<broker::Request>(decoded));
  } catch (const std::exception& e) {
    // Requests are checked before use, so this is a fault of the broker itself; the peer
    // whose request met it is dropped (its request may be half done), everyone else stays.
    std::fprintf(stderr, "etwrt-broker: fault handling a request from fd %d: %s\n", fd, e.what());
    faulted = true;
  }
  flush();  // What the state recorded as sent (pools, waits) must go out, even after a fault.
  if (faulted) drop_peer(fd);
}

void EventLoop::flush() {
  for (;;) {
    std::vector<broker::Outgoing> out = state_.take_outbox();
    if (out.empty()) return;
    std::set<int> failed;
    for (const broker::Outgoing& o : out) {
      if (failed.contains(o.peer) || !readers_.contains(o.peer)) continue;
      if (!send_frame(o.peer, o.message, o.pool ? o.pool->fd() : -1)) failed.insert(o.peer);
    }
    for (int fd : failed) {
      ::close(fd);
      readers_.erase(fd);
      state_.disconnect(fd);
    }
  }
}

void EventLoop::drop_peer(int fd) {
  if (readers_.erase(fd) == 0) return;
  ::close(fd);
  try {
    state_.disconnect(fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "etwrt-broker: fault dropping fd %d: %s\n", fd, e.what());
  }
  flush();
}

}  // namespace
}  // namespace etwrt

namespace etwrt {
namespace {

// Reports a refusal to start on stderr (broker.log when the library started us): 1.
int refuse(const std::string& what) {
  std::fprintf(stderr, "etwrt-broker: %s\n", what.c_str());
  return 1;
}

// The lock of the verified home `dir_fd`, opened without following a link: -1 and `error`
// when it cannot be, -2 when another broker holds it.
int take_lock(int dir_fd, const std::string& home, std::string& error) {
  const int fd = ::openat(dir_fd, kLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    error = "cannot use " + lock_path(home) + ": " +
            (fd < 0 ? std::strerror(errno) : "not a regular file of this user") +
            "; remove it, or set ETWRT_HOME to another directory of your own with mode 0700";
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (!os::try_lock_exclusive(fd)) {
    ::close(fd);
    return -2;
  }
  return fd;
}

// The listening socket, made in the verified home (the stale socket of a dead broker goes
// first: we hold the lock). Only this user may connect (mode 0600).
int listen_in(int dir_fd, const std::string& home, std::string& error) {
  const std::string path = path_in(dir_fd, kSocketName);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    error = "socket path too long: " + path;
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ::unlinkat(dir_fd, kSocketName, 0);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const mode_t old_mask = ::umask(0177);
  const int bound = fd < 0 ? -1 : ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (fd < 0 || bound != 0 || ::listen(fd, 64) != 0) {
    error = "cannot listen on " + socket_path(home) + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

// ETWRT_BROKER_OWNER_PID, if set: the process whose end ends this broker. False with `error`
// when the value is not a process id.
bool read_owner(Owner& owner, std::string& error) {
  const char* text = std::getenv("ETWRT_BROKER_OWNER_PID");
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const long pid = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || pid <= 0 || pid > INT32_MAX) {
    error = std::string(
                "ETWRT_BROKER_OWNER_PID: expected a process id (a positive integer), "
                "got '") +
            text + "'";
    return false;
  }
  owner.pid = static_cast<pid_t>(pid);
  owner.exit_fd = os::process_exit_fd(owner.pid);
  return true;
}

// ETWRT_MAX_SESSIONS, if set: how many sessions may run at once (the simulated system-wide
// limit). False with `error` when the value is not a positive integer.
bool read_max_sessions(std::size_t& max_sessions, std::string& error) {
  max_sessions = broker::kDefaultMaxSessions;
  const char* text = std::getenv("ETWRT_MAX_SESSIONS");
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || n <= 0 || n > static_cast<long>(kMostSessions)) {
    error = std::string("ETWRT_MAX_SESSIONS: expected a number of sessions in 1..") +
            std::to_string(kMostSessions) + ", got '" + text + "'";
    return false;
  }
  max_sessions = static_cast<std::size_t>(n);
  return true;
}

// broker.pid, made afresh (mode 0600, O_EXCL: never through a link or into another file).
bool write_pid(int dir_fd, const std::string& home, std::string& error) {
  ::unlinkat(dir_fd, kPidName, 0);
  const int fd =
      ::openat(dir_fd, kPidName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const std::string text = std::to_string(::getpid()) + "\n";
  const bool ok =
      fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok) error = "cannot write " + pid_path(home) + ": " + std::strerror(errno);
  if (fd >= 0) ::close(fd);
  return ok;
}

}  // namespace
}  // namespace etwrt

int main(int argc, char** argv) {
  using namespace etwrt;
  std::string home = broker_home();
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--home") == 0) home = argv[i + 1];
  }
  std::string error;
  Owner owner;
  std::size_t max_sessions = 0;
  if (!read_owner(owner, error) || !read_max_sessions(max_sessions, error)) return refuse(error);
  if (owner.gone()) return 0;  // Its owner ended already: nothing to serve.
  const int dir_fd = open_private_dir(home, error);
  if (dir_fd < 0 || !check_home_files(dir_fd, home, error)) return refuse(error);
  const int lock_fd = take_lock(dir_fd, home, error);
  // Another broker already serves this home: the starter that raced us will reach it.
  if (lock_fd == -2) return 0;
  if (lock_fd < 0) return refuse(error);
  const int listen_fd = listen_in(dir_fd, home, error);
  if (listen_fd < 0 || !write_pid(dir_fd, home, error)) return refuse(error);
  struct sigaction action {};
  action.sa_handler = on_signal;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  long idle_ms = 3000;
  if (const char* idle = std::getenv("ETWRT_BROKER_IDLE_MS"); idle != nullptr) {
    idle_ms = std::max(100L, std::strtol(idle, nullptr, 10));
  }
  EventLoop loop(listen_fd, std::chrono::milliseconds(idle_ms), owner, max_sessions);
  loop.run();
  // Unlink while still holding the lock, so a new broker never loses its fresh socket to us.
  ::unlinkat(dir_fd, kSocketName, 0);
  ::unlinkat(dir_fd, kPidName, 0);
  ::close(listen_fd);
  return 0;
}
