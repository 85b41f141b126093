// The console summary of `etwh run`, printed after the live lines (progress.h), which said each
// case's findings already: the table of the rules the run judged, the run's warnings once each
// with the cases that raised them, the cases not as expected with the rules blamed, the flaky
// ones, and the counts.
#pragma once

#include "harness/report/console_style.h"
#include "harness/report/report.h"

#include <cstddef>

namespace etwh {

struct ConsoleOptions {
  Verbosity verbosity = Verbosity::kNormal;  // quiet: no table, no warnings
  ConsoleStyle style;
  std::size_t width = 0;  // lines are cut to it (the terminal's); 0: no limit
};

// RULE STATUS CASES table (rule_verdicts) of the rules some case judged (verbose: all); each
// warning once, "FILE:LINE:COL: warning: text [RULE]" and under it "    in N cases: a, b" (not
// verbose, which printed them under their cases); "Not as expected (N):" with "STATUS id [RULES]"
// per such case; "Flaky (N):" with each flaky case's statuses; then "N cases, M not as expected[, K
// flaky], platform P, T s".
class ConsoleReport : public ReportWriter {
 public:
  ConsoleReport() = default;
  explicit ConsoleReport(ConsoleOptions options) : options_(options) {}
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;

 private:
  ConsoleOptions options_;
};

}  // namespace etwh
