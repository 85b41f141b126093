// `etwh stress --trace FILE`: one run of a profile drawn on a Trace Event Format timeline from
// what the run already measured (RunResult): per session, its written / delivered / lost
// counts, its rates, its consumer lag and buffers in use as counters (the time series' steps:
// batched, never one per event) and each RT_LostEvent notice as an instant on its consumer's
// track; per writer process, a slice per time-series step in which it wrote, with how many.
// Every stamp of a run is CLOCK_MONOTONIC (steady_clock), the Trace's clock; the consumers'
// times come through StampClock (stress_payload.h), within a few us of it.
//
// Sessions and writers get synthetic process ids (kSyntheticPidBase and up, above any Linux
// pid), the same for a given run and session or writer, named by process_name events.
#pragma once

#include "harness/stress/engine.h"
#include "harness/report/trace/trace.h"

#include <cstdint>
#include <string>

namespace etwh::stress {

inline constexpr std::int64_t kSyntheticPidBase = std::int64_t{1} << 30;

// Adds run number `run_index` (from 0, in the order the command ran them) of `label` (the
// profile, with its repetition) to `trace`.
void trace_run(trace::Trace& trace, const RunResult& run, unsigned run_index,
               const std::string& label);

}  // namespace etwh::stress
