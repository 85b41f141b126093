// The latency floor of this machine: how long a process asleep on a futex in shared memory
// takes to run again after another process wakes it. Every etwrt delivery to a sleeping
// consumer pays at least this, so `etwh stress` and etwh_bench_event_path report latencies
// against it, measured in the same run. Linux only.
//
// Where the sleeper runs decides the figure: on the waker's CPU the wake-up is a context switch
// (3-4 us on a 2-vCPU guest); on another, idle CPU it is an interrupt to that CPU, which on a
// virtual machine goes through the host (16-40 us there). Left to the scheduler, a pair starts
// on two CPUs and is moved onto one after a varying number of wake-ups, so the unpinned p99 lands
// on either figure (harness/stress/README.md, "The floors beside the latency"); each
// placement measured alone is stable.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace etwh {

enum class WakePlacement {
  kAnyCpu,    // neither process pinned: the scheduler's choice
  kSameCpu,   // both pinned to the CPU the calling thread is on
  kOtherCpu,  // the caller pinned there, the sleeper to another CPU the caller may use
};

struct WakeSamples {
  std::vector<std::uint64_t> ns;  // one latency per wake-up, in order
  std::vector<int> sleeper_cpus;  // the CPU the woken process ran on, per wake-up
  int waker_cpu = -1;             // the CPU the caller was pinned to (-1: kAnyCpu)
  std::string unavailable;        // why there are no samples: the placement cannot be had
};

// Forks a child that sleeps in FUTEX_WAIT on a word of a MAP_SHARED page; this thread stamps
// CLOCK_MONOTONIC, changes the word and calls FUTEX_WAKE; the child reads the clock as soon as
// it runs and sends the difference back (and is woken the same way). One sample per wake-up,
// `gap` apart so that the child is asleep each time. For a pinned placement the calling
// thread's CPU mask is restored before returning. No samples, and `unavailable` saying why,
// when the placement cannot be had: kOtherCpu for a thread allowed a single CPU, or a kernel
// or sandbox that refuses to pin threads.
// Throws std::runtime_error when the child cannot be started or stops answering (1 s), or the
// thread's CPU mask or CPU cannot be read. The child only makes system calls (safe after fork
// in a program with threads).
WakeSamples measure_futex_wake_floor(std::size_t samples, std::chrono::microseconds gap,
                                     WakePlacement placement = WakePlacement::kAnyCpu);

// How long this thread sleeps when it waits on a futex nobody wakes for `nap`: the nap asked,
// the timer slack (50 us by default on Linux, inherited by the threads a thread starts) and the
// wake-up of a halted CPU. A consumer that paces its polls with such naps (etwrt's reader,
// runtime/dataplane/README.md, "Reader pacing") delivers a record written during one up to a
// whole nap late, so `etwh stress` reports latencies against it too. One sample per nap that
// timed out (one a signal cut short is taken again). Throws std::runtime_error when the wait
// fails otherwise.
std::vector<std::uint64_t> measure_futex_nap(std::size_t samples, std::chrono::nanoseconds nap);

// The value at `quantile` (0..1) of `samples` (nearest rank; 0 when empty). Sorts them.
std::uint64_t sample_quantile(std::vector<std::uint64_t>& samples, double quantile);

}  // namespace etwh
