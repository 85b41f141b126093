// Run results and the writers that present them: a console table, a versioned JSON report and
// JUnit XML for CI. One interface, one class per format.
#pragma once

#include <optional>
#include <ostream>
#include <map>
#include <string>
#include <vector>

namespace etwh {

// Outcome of one case after comparison with the platform's expectations.
enum class Status { kPass, kFail, kXFail, kXPass, kUnsupported, kTimeout, kCrash, kHarnessError };

const char* status_name(Status s);                        // "PASS", "XFAIL", ...
std::optional<Status> parse_status(const std::string& s);  // inverse of status_name

struct CaseResult {
  std::string id;
  std::vector<std::string> rules;
  Status status = Status::kPass;
  bool as_expected = true;  // false counts against the run (FAIL, XPASS, unexpected CRASH...)
  std::string message;
  double duration_s = 0;
  std::string file;
};

struct RunInfo {
  std::string platform;
  std::string version;
  std::string start_time;  // ISO 8601, UTC
  std::string host;
  double duration_s = 0;
  std::string command_line;
  // Every rule of the catalog, in catalog order, so that each gets a verdict: a rule that no
  // case of the run names is UNSUPPORTED ("no case"). Empty: only the rules the cases name.
  std::vector<std::string> catalog_rules;
  // The catalog's reason why a rule cannot be judged on this platform (rule -> reason).
  std::map<std::string, std::string> unsupported_reasons;
};

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

// Per-rule table (rule_verdicts: rule, status, cases), then one line per case that did not
// PASS.
class ConsoleReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

// {schema_version: 1, run_info: {...}, results: [{id, rules, status, message, duration}],
//  rules: [{id, status, cases}]}.
class JsonReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

// One <testsuite> of <testcase>s; cases not as expected get <failure> (or <error> for harness
// faults), UNSUPPORTED gets <skipped>.
class JunitReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override;
};

}  // namespace etwh
