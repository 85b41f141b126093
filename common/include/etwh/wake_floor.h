// The latency floor of this machine: how long a process asleep on a futex in shared memory
// takes to run again after another process wakes it. Every etwrt delivery to a sleeping
// consumer pays at least this, so `etwh stress` and etwh_bench_event_path report latencies
// against it, measured in the same run (issue 15). Linux only.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace etwh {

// Forks a child that sleeps in FUTEX_WAIT on a word of a MAP_SHARED page; this process stamps
// CLOCK_MONOTONIC, changes the word and calls FUTEX_WAKE; the child reads the clock as soon as
// it runs and sends the difference back (and is woken the same way). One sample per wake-up,
// `gap` apart so that the child is asleep each time. Returns the samples in ns, in order.
// Throws std::runtime_error when the child cannot be started or stops answering (1 s).
// The child only makes system calls (safe after fork in a program with threads).
std::vector<std::uint64_t> measure_futex_wake_floor(std::size_t samples,
                                                    std::chrono::microseconds gap);

// The value at `quantile` (0..1) of `samples` (nearest rank; 0 when empty). Sorts them.
std::uint64_t sample_quantile(std::vector<std::uint64_t>& samples, double quantile);

}  // namespace etwh
