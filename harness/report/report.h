// The writers that present a run's results (harness/model/result.h): a console table, a versioned
// JSON report and JUnit XML for CI. One interface, one class per format.
#pragma once

#include "harness/model/result.h"

#include <ostream>
#include <string>
#include <vector>

namespace etwh {

// One rule's verdict over a run: the worst of its verdicts in the cases that reached it
// (rule_verdicts_of, result.h), or UNSUPPORTED when no case reached it.
struct RuleVerdict {
  std::string id;
  Status status = Status::kUnsupported;
  int cases = 0;        // cases that name it or failed a check of it
  int not_reached = 0;  // of those, cases that stopped before its checks
  // With no case: the catalog's UNSUPPORTED reason for the platform; none reached: why.
  std::string reason;
};

// The catalog's rules first (in order), then any other rule the cases name (sorted).
std::vector<RuleVerdict> rule_verdicts(const RunInfo& info, const std::vector<CaseResult>& results);

// What the platform's expectations said for the case: no entry means PASS.
Status expected_status(const CaseResult& r);

// A scenario file as CI readers show it: relative to the scenarios folder when inside it, else
// relative to the working folder when inside it, else as given ("/" separators).
std::string scenario_path(const std::string& file, const std::string& scenarios_dir);

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual void write(const RunInfo& info, const std::vector<CaseResult>& results,
                     std::ostream& out) const = 0;
};

// ConsoleReport: console_report.h.

// {schema_version: 3, run_info: {...}, results: [{id, rules, status, expected, as_expected,
//  message, duration, file, findings: [{rule, check, severity, text, expected?, observed?,
//  step?, evidence?}], rule_verdicts: [{rule, verdict, reason}]}], rules: [{id, status, cases,
//  not_reached, reason?}]}. `verdict` is a status name or NOT_REACHED (rule_verdicts_of). `message`
//  is the findings'
// readable summary; `expected` the status the platform's expectations named (PASS with none);
// `file` the scenario file (relative to the working folder when inside it). Schema:
// schemas/run.schema.json.
class JsonReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

// JUnit XML as the common CI readers (Jenkins, GitLab, xunit2) show it: one <testsuite> with
// the run's facts as suite <properties>; a <testcase> per case, its `file` the scenario file
// (scenario_path) and its classname that path dotted without ".json" ("sub.file"); a case not as
// expected gets <failure> (<error> for a harness fault) with the summary as message and, in the
// body, the summary and the findings, one a line; an expected non-PASS (XFAIL, UNSUPPORTED, ...) is
// <skipped> with the expectation's reason; a rule with no case is a skipped testcase of classname
// "rules" with the catalog's reason.
class JunitReport : public ReportWriter {
 public:
  // `scenarios_dir` (--scenarios): the folder scenario files are named from; empty: the
  // working folder.
  explicit JunitReport(std::string scenarios_dir = {}) : scenarios_dir_(std::move(scenarios_dir)) {}
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;

 private:
  std::string scenarios_dir_;
};

// Markdown for a CI job summary ($GITHUB_STEP_SUMMARY) or a merge-request comment: a title with
// the outcome, the cases not as expected first (status, expectation, rules, file, reason), then
// the count per status and the rules whose verdict is not PASS. Short: at most kMaxRows cases.
class MarkdownReport : public ReportWriter {
 public:
  static constexpr std::size_t kMaxRows = 50;
  explicit MarkdownReport(std::string scenarios_dir = {})
      : scenarios_dir_(std::move(scenarios_dir)) {}
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;

 private:
  std::string scenarios_dir_;
};

}  // namespace etwh
