// The live lines of `etwh run`, one per case as it finishes, with a counter (as lit and ctest
// print them), and under a case not as expected its failed checks, one a line, as a compiler
// prints diagnostics:
//   [ 3/67] PASS  cb-any-or-three-sessions (0.04 s)
//   [ 4/67] FAIL  cb-level-max (0.10 s)
//   scenarios/conformance/callbacks.json:40:9: error: p: Level expected 3, observed 2
//   [CB-LEVEL-MAX]
// With `--repeat`, the repetition follows the id ("cb-level-max #2"). Verbose adds every finding
// (warnings and notes) of every case; each line is cut to the width given (0: none).
#pragma once

#include "harness/report/console_style.h"
#include "harness/model/result.h"

#include <cstddef>
#include <ostream>

namespace etwh {

class ProgressPrinter {
 public:
  // `total`: how many case runs the counter goes to (cases x repetitions).
  ProgressPrinter(std::ostream& out, std::size_t total, Verbosity verbosity, ConsoleStyle style,
                  std::size_t width = 0)
      : out_(out), total_(total), verbosity_(verbosity), style_(style), width_(width) {}

  // Prints the line of a finished case run, and under it the findings the verbosity shows.
  // `repetition` is 1-based with --repeat, 0 when each case runs once. Not thread-safe: the
  // caller calls it from one thread at a time.
  void finished(const CaseResult& result, int repetition);

 private:
  std::ostream& out_;
  std::size_t total_;
  std::size_t done_ = 0;
  Verbosity verbosity_;
  ConsoleStyle style_;
  std::size_t width_;
};

}  // namespace etwh
