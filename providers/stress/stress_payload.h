// The payload every `etwh stress` event carries, shared by the writer (etwh-stress-writer) and
// the consumer side (harness/stress): who wrote it, its place in that writer's sequence and when
// EventWrite was called. The rest of the payload, up to the profile's size, is filler.
#pragma once

#include <cstdint>
#include <ctime>

namespace etwh::stress {

struct EventStamp {
  std::uint64_t sequence;       // 0, 1, 2... per writer thread
  std::uint64_t write_time_ns;  // CLOCK_MONOTONIC just before EventWrite (same clock everywhere)
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

}  // namespace etwh::stress
