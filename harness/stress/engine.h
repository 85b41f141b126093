// The stress engine: runs one profile against the ETW API (sessions, realtime consumers in this
// process, etwh-stress-writer processes) and accounts for every event per session. How the loss
// counters are read and why they are not double-counted: harness/stress/README.md.
#pragma once

#include "harness/model/stress_run.h"
#include "harness/stress/profile.h"
#include "harness/stress/stats.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace etwh::stress {

// A fault of the harness or its environment (a session that cannot start, a writer that dies),
// never a verdict on the platform.
class StressHarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineOptions {
  std::filesystem::path writer;  // the etwh-stress-writer executable
  // Called about every 100 ms while the writers run: seconds since they were told to go, and
  // what the consumers delivered so far ("delivered s0 1,234"); empty: nothing is told.
  std::function<void(double elapsed_s, const std::string& detail)> progress;
  std::uint64_t series_ms = 100;  // time series step
};

// Fills each session's derived figures (written, reported lost, balance, throughput, lag, the
// series' written and lag_events, CPU time per event) from
// the counters already in `run` and appends a line to run.failures for every check that does
// not hold (harness/stress/README.md, "Accounting"). Separate from run_profile so that each
// check can be tested on made-up numbers.
void judge_run(RunResult& run);

// A session's series against its run, once the run is over: the steps' largest latency must be
// the run's (every delivery lands in exactly one step), and each step's slowest delivery must
// split exactly into its quiet and behind parts (one record's, never a max paired with another
// record's split), with the longest silence in its wait between the quiet part and the
// latency. Throws StressHarnessError naming the session and the step otherwise: the
// harness's own bookkeeping broke, not the platform.
void check_series(const SessionResult& session);

// Runs the profile once. Throws StressHarnessError when the run could not be carried out; the
// platform's misbehaviour (imbalance, duplicates, ...) lands in RunResult::failures instead.
RunResult run_profile(const Profile& profile, const EngineOptions& options);

}  // namespace etwh::stress
