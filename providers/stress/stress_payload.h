// The payload every `etwh stress` event carries, shared by the writer (etwh-stress-writer) and
// the consumer side (harness/stress): who wrote it, its place in that writer's sequence and when
// EventWrite was called. The rest of the payload, up to the profile's size, is filler.
#pragma once

#include <etwh/invariant_tsc.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace etwh::stress {

struct EventStamp {
  std::uint64_t sequence;       // 0, 1, 2... per writer thread
  std::uint64_t write_time_ns;  // StampClock just before EventWrite (one mapping in every process)
  std::uint32_t process_index;  // the writer process's index in the run
  std::uint32_t thread_index;   // the thread's index in its process
};
static_assert(sizeof(EventStamp) == 24);

// The descriptor the stress writers use (Id 1, level 4, keyword 0: every session accepts it).
constexpr std::uint16_t kStressEventId = 1;
constexpr std::uint8_t kStressEventLevel = 4;

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The clock of the stamps (the writer's write time, the consumer's delivery time): the TSC,
// mapped to CLOCK_MONOTONIC nanoseconds by one calibration that the driver makes and hands to
// every writer (--clock), so that every process of a run reads the same mapping and a latency
// is two TSC reads apart. Why not clock_gettime: on a KVM guest it reads kvm-clock through the
// vDSO, and at the writer's maximum rate that was 46-56% of both the writer's and the
// consumer's thread (bench/README.md); one TSC read is what etwrt pays for its own stamp. It
// counts on an invariant TSC, synchronized across CPUs (as etwrt's pools do). Away from
// x86-64, or with mult 0, it is CLOCK_MONOTONIC itself.
struct StampClock {
  std::uint64_t tsc0 = 0;   // a TSC reading ...
  std::uint64_t mono0 = 0;  // ... and the CLOCK_MONOTONIC time it maps to
  std::uint64_t mult = 0;   // nanoseconds per TSC tick, times 2^32 (0: CLOCK_MONOTONIC)

  std::uint64_t now_ns() const {
#if defined(__x86_64__)
    if (mult != 0) {
      const auto ticks = static_cast<std::int64_t>(__rdtsc() - tsc0);  // a CPU a tick behind
      const __int128 ns = (static_cast<__int128>(ticks) * static_cast<__int128>(mult)) >> 32;
      return mono0 + static_cast<std::uint64_t>(static_cast<std::int64_t>(ns));
    }
#endif
    return monotonic_ns();
  }

  // Two (TSC, CLOCK_MONOTONIC) pairs `span` apart, each the tightest of 16 tries; the mapping
  // is exact for every process that uses it, and within a few ppm of CLOCK_MONOTONIC. Only
  // with an invariant TSC, by the kernel's own flags (the check etwrt's pools make).
  static StampClock calibrate(std::chrono::milliseconds span = std::chrono::milliseconds(20)) {
    StampClock c;
#if defined(__x86_64__)
    if (!etwh::cpu_has_invariant_tsc()) return c;
    const auto pair = [] {
      std::uint64_t best_width = ~std::uint64_t{0}, tsc = 0, mono = 0;
      for (int i = 0; i < 16; ++i) {
        const std::uint64_t before = __rdtsc();
        const std::uint64_t m = monotonic_ns();
        const std::uint64_t after = __rdtsc();
        if (after - before < best_width) {
          best_width = after - before;
          tsc = before + (after - before) / 2;
          mono = m;
        }
      }
      return std::pair{tsc, mono};
    };
    const auto [tsc_a, mono_a] = pair();
    std::this_thread::sleep_for(span);
    const auto [tsc_b, mono_b] = pair();
    if (tsc_b <= tsc_a || mono_b <= mono_a) return c;  // no usable TSC: CLOCK_MONOTONIC
    c.tsc0 = tsc_a;
    c.mono0 = mono_a;
    c.mult = static_cast<std::uint64_t>((static_cast<unsigned __int128>(mono_b - mono_a) << 32) /
                                        (tsc_b - tsc_a));
#endif
    return c;
  }

  // "TSC0:MONO0:MULT", decimal: what --clock carries.
  std::string text() const {
    return std::to_string(tsc0) + ":" + std::to_string(mono0) + ":" + std::to_string(mult);
  }
  static std::optional<StampClock> parse(std::string_view text) {
    StampClock c;
    std::uint64_t* fields[] = {&c.tsc0, &c.mono0, &c.mult};
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (std::size_t i = 0; i < 3; ++i) {
      const auto [next, ec] = std::from_chars(p, end, *fields[i]);
      if (ec != std::errc() || next == p) return std::nullopt;
      p = next;
      if (i < 2) {
        if (p == end || *p != ':') return std::nullopt;
        ++p;
      }
    }
    if (p != end) return std::nullopt;
    return c;
  }
};

}  // namespace etwh::stress
