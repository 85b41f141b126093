// Test support: a process forked by a test to act in a second process (a provider, a consumer,
// a controller). It tells the test when it is ready, may report numbers back, and is killed and
// reaped should the test end before it (a failed assertion returns early).
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace etwrt::testing {

class ForkedChild {
 public:
  // Forks; the child runs `body(*this)` and exits with the int it returns (_exit: no exit-time
  // handlers in a forked child, or LeakSanitizer would count the parent's objects as leaks).
  template <typename Body>
  explicit ForkedChild(Body body) {
    if (::pipe(ready_) != 0 || ::pipe(report_) != 0) {
      close_all();  // Not forked: ready() and reported() find nothing.
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      close_end(ready_[0]);
      close_end(report_[0]);
      ::_exit(body(*this));
    }
    close_end(ready_[1]);  // The test reads to the end once the child is gone.
    close_end(report_[1]);
  }
  ~ForkedChild() {
    kill();
    close_all();
  }
  ForkedChild(const ForkedChild&) = delete;
  ForkedChild& operator=(const ForkedChild&) = delete;

  bool forked() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // In the child: tells the test it is ready (or, `ok` false, that it failed).
  bool signal_ready(bool ok = true) {
    const char c = ok ? 'y' : 'n';
    return ::write(ready_[1], &c, 1) == 1;
  }
  // In the child: numbers for the test to read.
  bool report(const std::vector<std::uint64_t>& values) {
    const auto bytes = static_cast<ssize_t>(values.size() * sizeof(std::uint64_t));
    return ::write(report_[1], values.data(), static_cast<std::size_t>(bytes)) == bytes;
  }

  // In the test: waits for the child's signal; true when it said it is ready.
  bool ready() {
    char c = 0;
    return ready_[0] >= 0 && ::read(ready_[0], &c, 1) == 1 && c == 'y';
  }
  // In the test: all the child reported, read until it closed its end (exited).
  std::vector<std::uint64_t> reported() {
    std::vector<std::uint64_t> values;
    std::uint64_t v = 0;
    while (report_[0] >= 0 && ::read(report_[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) {
      values.push_back(v);
    }
    return values;
  }
  // In the test: waits for the child's end; true when it exited with status 0.
  bool exited_cleanly() {
    int status = 0;
    if (!forked() || ::waitpid(pid_, &status, 0) != pid_) return false;
    pid_ = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  // In the test: ends the child now (SIGKILL) and reaps it.
  void kill() {
    if (!forked()) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  static void close_end(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void close_all() {
    for (int* fd : {&ready_[0], &ready_[1], &report_[0], &report_[1]}) close_end(*fd);
  }

  pid_t pid_ = -1;
  int ready_[2] = {-1, -1};
  int report_[2] = {-1, -1};
};

}  // namespace etwrt::testing
