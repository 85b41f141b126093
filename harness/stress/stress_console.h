// `etwh stress` on the console, for people: after each run a table, one row per session (the
// accounting, throughput and latency percentiles with their units) with the latency floors as
// rows under the latency columns, then the writers', consumer's and broker's figures; and, on a
// terminal only, a progress line (what runs, how far, the time left over every run still to
// come), erased when done.
//   PASS  fast_steady  (run 1 of 3, 2.31 s)
//     session        written   delivered      lost     events/s      p50      p99    p99.9 lag s0
//     1,000,000   1,000,000         0    812 k/s    12.3 us  45.6 us   120 us    0.4 ms floor:
//     wake-up, same CPU                                     3.1 us   4.5 us   9.0 us
#pragma once

#include "harness/stress/engine.h"
#include "harness/stress/stats.h"

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace etwh::stress {

// A latency floor as a row of the table: its name and histogram, or why it was not measured.
struct FloorRow {
  std::string name;                             // "wake-up, same CPU"
  const LatencyHistogram* histogram = nullptr;  // null: not measured
  std::string unavailable;                      // why, when not measured
};

// What the table of one run says above its rows.
struct RunHeading {
  std::string status;  // PASS, FAIL
  std::string label;   // profile name, with its repetition ("fast_steady (repetition 2/3)")
  double duration_s = 0;
};

// The table of one finished run: heading, a row per session, the floors, the processes'
// figures, then each failure; every line cut to `width` (0: whole).
std::string run_table(const RunHeading& heading, const RunResult& run,
                      const std::vector<FloorRow>& floors, std::size_t width);

// The progress of a whole `etwh stress` command on stderr, drawn on a terminal only (the
// caller says whether stderr is one), redrawn in place with "\r" and erased when done or
// destroyed: "[2/6] fast_steady [threads=2]: 1.2 of 3.0 s, about 9 s left". The time left is
// what remains of this run plus the remaining runs' durations plus, per run, the time the runs
// so far took beyond their duration (setup, floors, draining).
class StressProgress {
 public:
  // `durations_s`: every run to come, in order (each profile's duration_ms, per repetition).
  StressProgress(std::ostream& out, bool terminal, std::vector<double> durations_s,
                 std::size_t width);
  ~StressProgress();
  StressProgress(const StressProgress&) = delete;
  StressProgress& operator=(const StressProgress&) = delete;

  // Run `index` (0-based) starts: its label.
  void start(std::size_t index, const std::string& label);
  // Draws the line `elapsed_s` into the current run, with what the run says of itself
  // (`detail`: the events delivered so far).
  void update(double elapsed_s, const std::string& detail = {});
  // The current run ended after `took_s`: the line is erased (the run's table follows).
  void finish(double took_s);
  // The line as it would be drawn now (for tests).
  std::string text(double elapsed_s, const std::string& detail = {}) const;

 private:
  void erase();
  std::ostream& out_;
  bool terminal_;
  std::vector<double> durations_s_;
  std::size_t width_;
  std::size_t index_ = 0;
  std::string label_;
  double overhead_s_ = 0;  // beyond their durations, summed over the finished runs
  std::size_t finished_ = 0;
  bool drawn_ = false;
};

}  // namespace etwh::stress
