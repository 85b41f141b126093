// The console summary of `etwh run`, printed after the live lines (progress.h): the per-rule
// table, the cases as expected but not plain passes, then every case not as expected with its
// reason, the flaky ones, and the counts.
#pragma once

#include "console_style.h"
#include "report.h"

namespace etwh {

struct ConsoleOptions {
  Verbosity verbosity = Verbosity::kNormal;  // quiet: no table, no expected-case lines
  ConsoleStyle style;
};

// RULE STATUS CASES table (rule_verdicts); "XFAIL id (expected): reason" per expected non-PASS
// and "PASS id (warnings): ..." per passing case with lint warnings; "Not as expected (N):"
// with "STATUS id: reason" per such case; "Flaky (N):" with each flaky case's statuses; then
// "N cases, M not as expected[, K flaky], platform P, T s".
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
