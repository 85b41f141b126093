// `etwh stress PROFILE... [--json FILE] [--sweep dim=v1,v2,...] [--repetitions N]
// [--baseline FILE] [--trace FILE] [--markdown FILE]`: loads every profile (all before any runs),
// runs each N times, prints one verdict line per session and writes the JSON results
// (schema_version, run_info, results[], as `etwh run` does; schemas/stress.schema.json). Exit 0
// when every run balanced and met its profile's expectation (and nothing regressed against the
// baseline), 1 when one did not, 2 on bad input or a harness fault.
#pragma once

#include "harness/compare/compare.h"
#include "harness/model/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace etwh::stress {

struct StressArgs {
  std::vector<std::string> profiles;
  // The file of each of stress_formats() (harness/report/stress_formats.h: --json, --markdown),
  // in its order; empty: not written.
  std::vector<std::string> format_files;
  std::string sweep;               // empty: none
  unsigned repetitions = 1;        // each profile runs this many times; every run is kept
  std::uint64_t series_ms = 100;   // time series step
  std::string baseline;            // a results file to compare this run with (empty: none)
  std::string trace_file;          // a timeline of the runs (harness/stress/stress_trace.h)
  compare::Thresholds thresholds;  // for the baseline comparison
  std::filesystem::path writer;    // etwh-stress-writer
  std::string platform, version, command_line, host, start_time;
  std::vector<StaleSessionStop> stale_sessions;  // stopped before the runs (run_stress_command)
};

int run_stress_command(const StressArgs& args);

}  // namespace etwh::stress
