// etwh-stress-writer: one provider process of an `etwh stress` run. It registers the run's
// provider, says "ready", waits for "go" on stdin, then writes from N threads at the profile's
// pace for the profile's duration, each event stamped (stress_payload.h), and prints one JSON
// line with what every thread's EventWrite accepted and refused. The driver trusts these counts
// as "written", so they are counted here, at the call, never inferred. It never outlives the
// driver: the end of its stdin (the driver holds the other end for the whole run) ends it.
// While the threads write, the main thread samples their counts every --series-ms, so the
// driver can draw "written" over time; the final line also gives the process's CPU time.
#include "stress_payload.h"
#include "win32_text.h"

#include <evntprov.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using etwh::stress::EventStamp;
using etwh::stress::monotonic_ns;
using etwh::stress::StampClock;

struct Pace {
  std::uint64_t rate = 0;          // events/s per thread; 0 = as fast as possible
  std::uint64_t burst_events = 0;  // 0 = steady
  std::uint64_t burst_period_ms = 0;
  std::uint64_t duration_ms = 0;
};

struct ThreadCounts {
  std::uint64_t attempts = 0;
  std::uint64_t accepted = 0;
  std::uint64_t refused_no_buffer = 0;  // ERROR_NOT_ENOUGH_MEMORY
  std::uint64_t refused_too_large = 0;  // ERROR_MORE_DATA
  std::uint64_t refused_other = 0;
  std::uint64_t first_write_ns = 0;
  std::uint64_t last_write_ns = 0;
};

void sleep_until(std::uint64_t deadline_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000ull);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000ull);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

class ThreadWriter {
 public:
  ThreadWriter(REGHANDLE handle, std::uint32_t process_index, std::uint32_t thread_index,
               std::size_t payload_bytes, std::atomic<std::uint64_t>& published,
               const StampClock& clock)
      : handle_(handle), payload_(payload_bytes, 0), published_(&published), clock_(clock) {
    EventDescCreate(&descriptor_, etwh::stress::kStressEventId, 0, 0,
                    etwh::stress::kStressEventLevel, 0, 0, 0);
    stamp_.process_index = process_index;
    stamp_.thread_index = thread_index;
    EventDataDescCreate(&data_, payload_.data(), static_cast<ULONG>(payload_.size()));
  }

  // Writes one event; returns the time it was stamped with.
  std::uint64_t write_one() {
    stamp_.sequence = counts_.attempts;
    stamp_.write_time_ns = clock_.now_ns();
    std::memcpy(payload_.data(), &stamp_, sizeof stamp_);
    const ULONG status = EventWrite(handle_, &descriptor_, 1, &data_);
    if (spin_ > 0) spin(spin_);
    ++counts_.attempts;
    // One writer per counter: a relaxed store is a plain store, nothing on the write path.
    published_->store(counts_.attempts, std::memory_order_relaxed);
    if (status == ERROR_SUCCESS)
      ++counts_.accepted;
    else if (status == ERROR_NOT_ENOUGH_MEMORY)
      ++counts_.refused_no_buffer;
    else if (status == ERROR_MORE_DATA)
      ++counts_.refused_too_large;
    else
      ++counts_.refused_other;
    if (counts_.first_write_ns == 0) counts_.first_write_ns = stamp_.write_time_ns;
    counts_.last_write_ns = stamp_.write_time_ns;
    return stamp_.write_time_ns;
  }

  void run(const Pace& pace, std::uint64_t start_ns) {
    const std::uint64_t end_ns = start_ns + pace.duration_ms * 1000000ull;
    if (pace.burst_events > 0) {
      const std::uint64_t period_ns = pace.burst_period_ms * 1000000ull;
      for (std::uint64_t burst_start = start_ns; burst_start < end_ns; burst_start += period_ns) {
        sleep_until(burst_start);
        for (std::uint64_t i = 0; i < pace.burst_events; ++i) {
          if (write_one() >= end_ns) return;
        }
      }
      return;
    }
    if (pace.rate == 0) {
      while (write_one() < end_ns) {
      }
      return;
    }
    // Steady: event i is due at start + i / rate; catch up in a batch after each sleep.
    for (;;) {
      const std::uint64_t now = monotonic_ns();
      if (now >= end_ns) return;
      const std::uint64_t due =
          static_cast<std::uint64_t>((static_cast<unsigned __int128>(now - start_ns) * pace.rate) /
                                     1000000000ull) +
          1;
      while (counts_.attempts < due) {
        if (write_one() >= end_ns) return;
      }
      const std::uint64_t next_due_ns =
          start_ns +
          static_cast<std::uint64_t>(
              (static_cast<unsigned __int128>(counts_.attempts) * 1000000000ull) / pace.rate);
      sleep_until(std::min(next_due_ns, end_ns));
    }
  }

  const ThreadCounts& counts() const { return counts_; }
  void set_spin(std::uint64_t iterations) { spin_ = iterations; }

  // The planted slowdown's busy wait: a loop the compiler may not remove.
  static void spin(std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) asm volatile("" ::: "memory");
  }

 private:
  REGHANDLE handle_;
  EVENT_DESCRIPTOR descriptor_{};
  EventStamp stamp_{};
  std::vector<unsigned char> payload_;
  EVENT_DATA_DESCRIPTOR data_{};
  ThreadCounts counts_;
  std::atomic<std::uint64_t>* published_;  // counts_.attempts, for the sampler
  StampClock clock_;                       // a copy per thread: read on every event
  std::uint64_t spin_ = 0;
};

// A test hook for `etwh compare` (harness/compare/README.md): ETWH_STRESS_WRITER_SPIN=N adds a
// busy loop of N iterations after every EventWrite, a planted slowdown of the write path.
std::uint64_t planted_spin() {
  const char* text = std::getenv("ETWH_STRESS_WRITER_SPIN");
  return text == nullptr ? 0 : std::strtoull(text, nullptr, 10);
}

// Runs every writer on its own thread from start_ns and, meanwhile, samples all threads'
// attempts every series_ms; returns the samples (at start_ns + k * series_ms, k = 1, 2, ...).
std::vector<std::uint64_t> write_and_sample(
    std::vector<ThreadWriter>& writers, const std::vector<std::atomic<std::uint64_t>>& published,
    const Pace& pace, std::uint64_t start_ns, std::uint64_t series_ms) {
  std::vector<std::uint64_t> written_series;
  // Joined before the counts are read: each thread's etwrt writers hand over their last
  // buffer at thread exit, so everything accepted is on its way to the consumer.
  std::mutex mutex;
  std::condition_variable all_done;
  auto running = static_cast<std::uint32_t>(writers.size());
  std::vector<std::jthread> pool;
  for (auto& w : writers) {
    pool.emplace_back([&w, &pace, &mutex, &running, &all_done, start_ns] {
      w.run(pace, start_ns);
      std::lock_guard lock(mutex);
      if (--running == 0) all_done.notify_one();
    });
  }
  // steady_clock is CLOCK_MONOTONIC, the clock of start_ns. The last thread's end wakes the
  // sampler at once, so the process does not linger to the next step.
  std::unique_lock lock(mutex);
  for (std::uint64_t k = 1;; ++k) {
    const std::chrono::steady_clock::time_point due{
        std::chrono::nanoseconds(start_ns + k * series_ms * 1000000ull)};
    if (all_done.wait_until(lock, due, [&] { return running == 0; })) break;
    std::uint64_t sum = 0;
    for (const auto& p : published) sum += p.load(std::memory_order_relaxed);
    written_series.push_back(sum);
  }
  lock.unlock();
  pool.clear();  // joins
  return written_series;
}

// The line the driver reads once the threads are done: each thread's counts, the written
// samples, and the process's peak RSS and CPU time.
nlohmann::json final_counts(std::uint32_t process_index, const std::vector<ThreadWriter>& writers,
                            std::uint64_t start_ns,
                            const std::vector<std::uint64_t>& written_series) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  nlohmann::json out = {
      {"process_index", process_index},        {"peak_rss_kb", usage.ru_maxrss},
      {"cpu_user_s", seconds(usage.ru_utime)}, {"cpu_system_s", seconds(usage.ru_stime)},
      {"series_start_ns", start_ns},           {"written_series", written_series},
      {"threads", nlohmann::json::array()}};
  for (const auto& w : writers) {
    const ThreadCounts& c = w.counts();
    out["threads"].push_back({{"attempts", c.attempts},
                              {"accepted", c.accepted},
                              {"refused_no_buffer", c.refused_no_buffer},
                              {"refused_too_large", c.refused_too_large},
                              {"refused_other", c.refused_other},
                              {"first_write_ns", c.first_write_ns},
                              {"last_write_ns", c.last_write_ns}});
  }
  return out;
}

// While the threads write, nobody reads stdin: a watcher does, and ends the process when the
// driver is gone (end of file), since nothing would ever read what it writes.
void exit_when_stdin_closes() {
  std::thread([] {
    char buffer[256];
    for (;;) {
      const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
    }
    std::_Exit(3);
  }).detach();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"etwh-stress-writer: a provider process of an etwh stress run"};
  std::string provider_text;
  std::uint32_t process_index = 0, threads = 1;
  std::size_t payload_bytes = sizeof(EventStamp);
  Pace pace;
  std::uint64_t series_ms = 100;
  app.add_option("--provider", provider_text, "Provider GUID")->required();
  app.add_option("--process-index", process_index, "This process's index in the run");
  app.add_option("--threads", threads, "Writer threads")->check(CLI::Range(1u, 1024u));
  app.add_option("--payload-bytes", payload_bytes, "UserData size")
      ->check(CLI::Range(sizeof(EventStamp), std::size_t{65536}));
  app.add_option("--rate", pace.rate, "Events/s per thread (0: as fast as possible)");
  app.add_option("--burst-events", pace.burst_events, "Events per burst (0: steady)");
  app.add_option("--burst-period-ms", pace.burst_period_ms, "Time between burst starts");
  app.add_option("--duration-ms", pace.duration_ms, "How long to write")->required();
  std::string clock_text;
  app.add_option("--clock", clock_text,
                 "The stamps' clock: TSC0:MONO0:MULT (default: CLOCK_MONOTONIC)");
  app.add_option("--series-ms", series_ms, "Sample the written counts every N ms")
      ->check(CLI::Range(std::uint64_t{10}, std::uint64_t{60000}));
  CLI11_PARSE(app, argc, argv);
  const auto provider = etwh::parse_guid(provider_text);
  if (!provider) {
    std::cerr << "etwh-stress-writer: --provider: not a GUID: " << provider_text << "\n";
    return 2;
  }
  StampClock clock;  // mult 0: CLOCK_MONOTONIC
  if (!clock_text.empty()) {
    const auto parsed = StampClock::parse(clock_text);
    if (!parsed) {
      std::cerr << "etwh-stress-writer: --clock: expected TSC0:MONO0:MULT, got " << clock_text
                << "\n";
      return 2;
    }
    clock = *parsed;
  }
  if (pace.burst_events > 0 && pace.burst_period_ms == 0) {
    std::cerr << "etwh-stress-writer: --burst-events needs --burst-period-ms > 0\n";
    return 2;
  }

  REGHANDLE handle = 0;
  const ULONG status = EventRegister(&*provider, nullptr, nullptr, &handle);
  if (status != ERROR_SUCCESS) {
    std::cerr << "etwh-stress-writer: EventRegister failed with " << status << "\n";
    return 1;
  }
  std::cout << nlohmann::json{{"ready", true}, {"enabled", EventProviderEnabled(handle, 0, 0) != 0}}
            << std::endl;
  std::string go;
  if (!std::getline(std::cin, go) || go != "go") {
    EventUnregister(handle);
    return 1;  // The driver gave up on this run.
  }
  exit_when_stdin_closes();

  std::vector<std::atomic<std::uint64_t>> published(threads);
  std::vector<ThreadWriter> writers;
  writers.reserve(threads);
  for (std::uint32_t t = 0; t < threads; ++t) {
    writers.emplace_back(handle, process_index, t, payload_bytes, published[t], clock);
    writers.back().set_spin(planted_spin());
  }
  const std::uint64_t start_ns = monotonic_ns();
  const std::vector<std::uint64_t> written_series =
      write_and_sample(writers, published, pace, start_ns, series_ms);
  EventUnregister(handle);

  nlohmann::json out = final_counts(process_index, writers, start_ns, written_series);
  // A deliberate defect for the harness's own tests: one event fewer reported than written,
  // which the run must catch as an imbalance.
  if (const char* mutant = std::getenv("ETWH_STRESS_WRITER_MUTANT");
      mutant != nullptr && std::string(mutant) == "undercount" &&
      out["threads"][0]["attempts"].get<std::uint64_t>() > 0) {
    out["threads"][0]["attempts"] = out["threads"][0]["attempts"].get<std::uint64_t>() - 1;
  }
  std::cout << out << std::endl;
  return 0;
}
