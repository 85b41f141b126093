// The etwrt benchmarks' shared world (providers, sessions, ProcessTrace threads), set up and
// torn down by whichever main links runtime_bench.cc: etwh_bench_runtime alone, or
// etwh_bench_event_path beside LTTng-UST and the raw ring.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <string>
#include <vector>

namespace etwh_bench {

// A realtime session's EVENT_TRACE_PROPERTIES with room for its name, for StartTraceA and
// ControlTraceA.
struct SessionProperties {
  SessionProperties() : bytes(sizeof(EVENT_TRACE_PROPERTIES) + 256) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::vector<char> bytes;
};

// Points ETWRT_HOME at a fresh directory (our own broker) unless the caller set one; returns
// that directory, or "" when the caller's is used. Call before any Win32 ETW function.
std::string runtime_begin();

// Stops every session the benchmarks started, joins their consumers, unregisters the
// providers, and stops the broker and removes the directory runtime_begin made.
void runtime_end(const std::string& owned_dir);

// One cache line bounced between two threads pinned to the first two CPUs this process may use,
// ns per round trip (0: fewer than two, or pinning refused). Measured beside each EventWrite and
// raw-ring repetition: it tells in which of the host's modes the repetition ran, and ratios.py
// compares only repetitions of one mode (bench/reducing_variance.md, "The host's modes").
double cpu_round_trip_ns(int round_trips = 20000);

}  // namespace etwh_bench
