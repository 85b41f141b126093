#include "etwh/wake_floor.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <new>
#include <optional>
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
  std::atomic<int> sleeper_cpu{-1};
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
    s.sleeper_cpu.store(::sched_getcpu(), std::memory_order_relaxed);
    if (s.quit.word.load(std::memory_order_acquire) != 0) ::_exit(0);
    seen = s.go.word.load(std::memory_order_acquire);
    s.latency_ns.store(woke - s.stamp_ns.load(std::memory_order_acquire),
                       std::memory_order_relaxed);
    s.done.word.store(seen, std::memory_order_release);
    futex_wake(s.done.word);
  }
}

// Pins the calling thread to `cpu`; false when the kernel refuses.
bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::sched_setaffinity(0, sizeof one, &one) == 0;
}

// Gives the calling thread its CPU mask back, however the measurement ends.
class AffinityRestorer {
 public:
  explicit AffinityRestorer(const cpu_set_t& mask) : mask_(mask) {}
  AffinityRestorer(const AffinityRestorer&) = delete;
  AffinityRestorer& operator=(const AffinityRestorer&) = delete;
  ~AffinityRestorer() { ::sched_setaffinity(0, sizeof mask_, &mask_); }

 private:
  cpu_set_t mask_;
};

WakeSamples unavailable(std::string why) {
  WakeSamples none;
  none.unavailable = std::move(why);
  return none;
}

// A kernel (or a sandbox's seccomp policy) may refuse to pin: that placement cannot be had.
std::string refused_pin() {
  return std::string("the kernel refused to pin a thread to one CPU (sched_setaffinity: ") +
         std::strerror(errno) + ")";
}

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("wake floor: ") + what + ": " + std::strerror(errno));
}

// The wake-ups themselves, with the child already started; stops the child.
WakeSamples sample_wakeups(Shared& s, pid_t child, std::size_t samples,
                           std::chrono::microseconds gap) {
  WakeSamples out;
  out.ns.reserve(samples);
  out.sleeper_cpus.reserve(samples);
  std::string error;
  for (std::uint32_t i = 1; i <= samples && error.empty(); ++i) {
    std::this_thread::sleep_for(gap);  // the child is asleep again by now
    s.stamp_ns.store(now_ns(), std::memory_order_release);
    s.go.word.store(i, std::memory_order_release);
    futex_wake(s.go.word);
    const std::uint64_t deadline = now_ns() + 1'000'000'000;
    std::uint32_t done = 0;
    while ((done = s.done.word.load(std::memory_order_acquire)) != i && now_ns() < deadline) {
      futex_wait(s.done.word, done, 10'000'000);
    }
    if (done != i) {
      error = "wake floor: the child process stopped answering";
    } else {
      out.ns.push_back(s.latency_ns.load(std::memory_order_relaxed));
      out.sleeper_cpus.push_back(s.sleeper_cpu.load(std::memory_order_relaxed));
    }
  }
  s.quit.word.store(1, std::memory_order_release);
  futex_wake(s.go.word);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!error.empty()) throw std::runtime_error(error);
  return out;
}

}  // namespace

WakeSamples measure_futex_wake_floor(std::size_t samples, std::chrono::microseconds gap,
                                     WakePlacement placement) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) fail("sched_getaffinity");
  std::optional<AffinityRestorer> restore;
  int waker = -1, sleeper = -1;
  if (placement != WakePlacement::kAnyCpu) {
    waker = ::sched_getcpu();
    if (waker < 0 || waker >= CPU_SETSIZE || !CPU_ISSET(waker, &allowed)) fail("sched_getcpu");
    sleeper = waker;
    if (placement == WakePlacement::kOtherCpu) {
      sleeper = -1;
      for (int cpu = 0; cpu < CPU_SETSIZE && sleeper < 0; ++cpu) {
        if (cpu != waker && CPU_ISSET(cpu, &allowed)) sleeper = cpu;
      }
      if (sleeper < 0) return unavailable("this thread may use a single CPU");
    }
    restore.emplace(allowed);
    // The child inherits the mask it is forked with: the sleeper's CPU, then the waker's.
    if (!pin_to(sleeper)) return unavailable(refused_pin());
  }
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) fail("mmap");
  auto* s = new (page) Shared{};
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::munmap(page, 4096);
    errno = e;
    fail("fork");
  }
  if (child == 0) child_loop(*s, parent);
  if (waker >= 0 && !pin_to(waker)) {
    const std::string why = refused_pin();
    ::kill(child, SIGKILL);
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    ::munmap(page, 4096);
    return unavailable(why);
  }
  try {
    WakeSamples out = sample_wakeups(*s, child, samples, gap);
    out.waker_cpu = waker;
    ::munmap(page, 4096);
    return out;
  } catch (...) {
    ::munmap(page, 4096);
    throw;
  }
}

std::vector<std::uint64_t> measure_futex_nap(std::size_t samples, std::chrono::nanoseconds nap) {
  std::vector<std::uint64_t> out;
  out.reserve(samples);
  std::uint32_t word = 0;  // never changed: only the timeout ends a wait
  const auto ns = static_cast<std::uint64_t>(nap.count());
  while (out.size() < samples) {
    timespec t{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
    const std::uint64_t start = now_ns();
    const long rc = ::syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0u, &t, nullptr, 0);
    const std::uint64_t slept = now_ns() - start;
    if (rc == 0 || errno == EAGAIN)
      throw std::runtime_error("nap floor: a futex nobody wakes woke");
    if (errno == EINTR) continue;
    if (errno != ETIMEDOUT) {
      throw std::runtime_error(std::string("nap floor: futex wait: ") + std::strerror(errno));
    }
    out.push_back(slept);
  }
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
