#include "etwh/wake_floor.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

namespace etwh {
namespace {

// The page both processes map. Each word on its own cache line: the measurement is of the
// wake-up, not of two processes writing one line.
struct alignas(64) Line {
  std::atomic<std::uint32_t> word{0};
};
struct Shared {
  Line go;    // sample number this process asks for; the child sleeps on it
  Line done;  // sample number the child answered; this process sleeps on it
  Line quit;  // 1: the child exits
  alignas(64) std::atomic<std::uint64_t> stamp_ns{0};
  alignas(64) std::atomic<std::uint64_t> latency_ns{0};
};
static_assert(sizeof(Shared) <= 4096);

std::uint64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(t.tv_nsec);
}

// Sleeps while `word` holds `value` (shared futex: the waker is another process), at most
// `timeout_ns`. Returns at once when the word already changed.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t value, std::uint64_t timeout_ns) {
  timespec t{static_cast<time_t>(timeout_ns / 1000000000ull),
             static_cast<long>(timeout_ns % 1000000000ull)};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, value, &t, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

// The child: answers each sample until told to quit, or exits when its parent is gone.
[[noreturn]] void child_loop(Shared& s, pid_t parent) {
  std::uint32_t seen = 0;
  for (;;) {
    while (s.go.word.load(std::memory_order_acquire) == seen &&
           s.quit.word.load(std::memory_order_acquire) == 0) {
      if (::getppid() != parent) ::_exit(0);
      futex_wait(s.go.word, seen, 100'000'000);
    }
    const std::uint64_t woke = now_ns();
    if (s.quit.word.load(std::memory_order_acquire) != 0) ::_exit(0);
    seen = s.go.word.load(std::memory_order_acquire);
    s.latency_ns.store(woke - s.stamp_ns.load(std::memory_order_acquire),
                       std::memory_order_relaxed);
    s.done.word.store(seen, std::memory_order_release);
    futex_wake(s.done.word);
  }
}

}  // namespace

std::vector<std::uint64_t> measure_futex_wake_floor(std::size_t samples,
                                                    std::chrono::microseconds gap) {
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    throw std::runtime_error(std::string("wake floor: mmap: ") + std::strerror(errno));
  }
  auto* s = new (page) Shared{};
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::munmap(page, 4096);
    throw std::runtime_error(std::string("wake floor: fork: ") + std::strerror(e));
  }
  if (child == 0) child_loop(*s, parent);
  std::vector<std::uint64_t> out;
  out.reserve(samples);
  std::string error;
  for (std::uint32_t i = 1; i <= samples && error.empty(); ++i) {
    std::this_thread::sleep_for(gap);  // the child is asleep again by now
    s->stamp_ns.store(now_ns(), std::memory_order_release);
    s->go.word.store(i, std::memory_order_release);
    futex_wake(s->go.word);
    const std::uint64_t deadline = now_ns() + 1'000'000'000;
    std::uint32_t done = 0;
    while ((done = s->done.word.load(std::memory_order_acquire)) != i && now_ns() < deadline) {
      futex_wait(s->done.word, done, 10'000'000);
    }
    if (done != i) {
      error = "wake floor: the child process stopped answering";
    } else {
      out.push_back(s->latency_ns.load(std::memory_order_relaxed));
    }
  }
  s->quit.word.store(1, std::memory_order_release);
  futex_wake(s->go.word);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::munmap(page, 4096);
  if (!error.empty()) throw std::runtime_error(error);
  return out;
}

std::uint64_t sample_quantile(std::vector<std::uint64_t>& samples, double quantile) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(quantile * static_cast<double>(samples.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return samples[std::min(index, samples.size() - 1)];
}

}  // namespace etwh
