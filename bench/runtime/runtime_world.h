// The etwrt benchmarks' shared world (providers, sessions, ProcessTrace threads), set up and
// torn down by whichever main links runtime_bench.cc: etwh_bench_runtime alone, or
// etwh_bench_event_path beside LTTng-UST and the raw ring.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>
#include <functional>
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

// A main's run of the benchmarks registered so far, in etwrt's world: runtime_begin, Google
// Benchmark's flags and run, the main's own `teardown`, runtime_end. 2 when the world cannot be
// set up (said on stderr after `program`), 1 for a flag Google Benchmark does not know, else 0.
inline int run_in_runtime(const char* program, int argc, char** argv,
                          const std::function<void()>& teardown = {}) {
  std::string owned_dir;
  try {
    owned_dir = runtime_begin();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (teardown) teardown();
  runtime_end(owned_dir);
  return 0;
}

// One cache line bounced between two threads pinned to the first two CPUs this process may use,
// ns per round trip (0: fewer than two, or pinning refused). Measured beside each EventWrite and
// raw-ring repetition: it tells in which of the host's modes the repetition ran, and ratios.py
// compares only repetitions of one mode (bench/reducing_variance.md, "The host's modes").
double cpu_round_trip_ns(int round_trips = 20000);

}  // namespace etwh_bench
