// The etwrt benchmarks' shared world (providers, sessions, ProcessTrace threads), set up and
// torn down by whichever main links runtime_bench.cc: etwh_bench_runtime alone, or
// etwh_bench_event_path beside LTTng-UST and the raw ring.
#pragma once

#include <string>

namespace etwh_bench {

// Points ETWRT_HOME at a fresh directory (our own broker) unless the caller set one; returns
// that directory, or "" when the caller's is used. Call before any Win32 ETW function.
std::string runtime_begin();

// Stops every session the benchmarks started, joins their consumers, unregisters the
// providers, and stops the broker and removes the directory runtime_begin made.
void runtime_end(const std::string& owned_dir);

}  // namespace etwh_bench
