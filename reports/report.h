// The writers that present a run's results (harness/result.h): a console table, a versioned
// JSON report and JUnit XML for CI. One interface, one class per format.
#pragma once

#include "result.h"

#include <ostream>
#include <string>
#include <vector>

namespace etwh {

// One rule's verdict over a run: the worst status among the cases naming it, or UNSUPPORTED
// with no case.
struct RuleVerdict {
  std::string id;
  Status status = Status::kUnsupported;
  int cases = 0;
  std::string reason;  // with no case: the catalog's UNSUPPORTED reason for the platform
};

// The catalog's rules first (in order), then any other rule the cases name (sorted).
std::vector<RuleVerdict> rule_verdicts(const RunInfo& info, const std::vector<CaseResult>& results);

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void write(const RunInfo& info, const std::vector<CaseResult>& results,
                     std::ostream& out) const = 0;
};

// ConsoleReport: console_report.h.

// {schema_version: 2, run_info: {...}, results: [{id, rules, status, as_expected, message,
//  duration, findings: [{rule, check, severity, text, expected?, observed?, step?, evidence?}]}],
//  rules: [{id, status, cases}]}. `message` is the findings' readable summary.
class JsonReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

// One <testsuite> of <testcase>s; cases not as expected get <failure> (or <error> for harness
// faults) whose message is the summary and whose body lists the findings, one a line;
// UNSUPPORTED gets <skipped>.
class JunitReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

}  // namespace etwh
