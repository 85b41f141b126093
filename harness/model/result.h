// What a run finds, as data: the status of a case, each finding (a failed check, a lint
// warning, a note) with its rule, expected and observed values and the step it came from, the
// case results and the run's facts. The driver and the commands produce these; the report
// writers (harness/report/) and `etwh selftest` only read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etwh {

// Outcome of one case after comparison with the platform's expectations.
enum class Status { kPass, kFail, kXFail, kXPass, kUnsupported, kTimeout, kCrash, kHarnessError };

const char* status_name(Status s);                         // "PASS", "XFAIL", ...
std::optional<Status> parse_status(const std::string& s);  // inverse of status_name

// How a finding counts: a failure fails its case; a warning (lint) is reported with it; a note
// records something observed or decided that judges nothing (a value the documents leave
// open, the platform expectation that applied).
enum class Severity { kFailure, kWarning, kNote };

const char* severity_name(Severity s);  // "failure", "warning", "note"

// Where in the scenarios a finding comes from. Empty fields are unknown (a setup fault, a
// finding over a whole case).
struct StepLocation {
  std::string case_id;
  std::optional<std::size_t> index;  // the step's index in the case
  std::string op;                    // the step's op ("enable", "collect", ...)
  std::string pointer;               // JSON pointer of the step in its file
  std::string file;
  std::size_t line = 0, col = 0;  // where the step is in its file (1-based); 0: unknown
};

// An event a consumer got, as TDH decoded it (the agent's `decoded`, PROTOCOL.md): its name
// ("" when TDH gives none) and each top-level field's value as text.
struct DecodedField {
  std::string name;
  std::string value;
  bool operator==(const DecodedField&) const = default;
};
struct DecodedEvent {
  std::string name;
  std::vector<DecodedField> fields;
  bool operator==(const DecodedEvent&) const = default;
};

// "Name(a=1, s=text)": how a decoded event reads in a message.
std::string describe(const DecodedEvent& e);

struct Finding {
  std::string rule;      // a catalog rule ID (harness/model/rules.h); empty: no rule (setup, note)
  std::string check;     // what was compared ("Level", "status", "missing", "lint", ...)
  std::string expected;  // the value the rule asks for, as text; empty when not one value
  std::string observed;  // the value the platform gave
  std::string text;      // the whole sentence, for people
  Severity severity = Severity::kFailure;
  StepLocation step;
  std::string evidence;  // what the platform returned around it (a status code, a reply)
  // The event the finding is about, decoded, when it is about one a consumer got and TDH could
  // decode it (TraceLogging, or a manifest the case names).
  std::optional<DecodedEvent> event;
};

// The checks that summarize() groups apart from the step's own comparisons.
inline constexpr char kCheckLint[] = "lint";                // a lint finding (text says it all)
inline constexpr char kCheckExpectLint[] = "expect_lint";   // a case's expect_lint not met
inline constexpr char kCheckObserved[] = "observed";        // a value recorded, not judged
inline constexpr char kCheckExpectation[] = "expectation";  // the platform's expectation
// What ended a case early (TIMEOUT, CRASH, HARNESS_ERROR): no rule, the step it happened in.
inline constexpr char kCheckFault[] = "fault";
// A lint finding the provider under test declares it means (a note, not a warning).
inline constexpr char kCheckLintIntended[] = "lint_intended";

// A failed check blamed on `rule`: `text` for people, `expected` and `observed` as data (empty
// when the check is not one value against another). The step is filled in by whoever knows it.
Finding failed_check(std::string rule, std::string check, std::string text,
                     std::string expected = {}, std::string observed = {});

// A note of what was seen (check kCheckObserved), judged against nothing; `rule` when it speaks
// of one.
Finding observed_note(std::string text, std::string rule = {});

// "RULE: text" (a failure without a rule: "setup: text"; a note: the text), then " [event
// Name(a=1)]" when it has a decoded event: how a finding reads in a message.
std::string describe(const Finding& f);

// A case's readable summary, from its findings: each step's failures as
// "step P (op): RULE: text; RULE: text", the fault that ended the case, notes (only when
// nothing failed), lint findings, expect_lint mismatches and the expectation, joined by " | ".
std::string summarize(const std::vector<Finding>& findings, const std::string& fault);

struct CaseResult {
  std::string id;
  std::vector<std::string> rules;
  Status status = Status::kPass;
  bool as_expected = true;  // false counts against the run (FAIL, XPASS, unexpected CRASH...)
  std::string message;      // summarize() of findings and fault
  double duration_s = 0;
  std::string file;
  std::vector<Finding> findings;
  // With `etwh run --repeat N`: each repetition's status, in order (empty: run once). A case
  // whose repetitions differ is flaky.
  std::vector<Status> repetitions = {};
  // Rules the case names that it never judged: it stopped (a failed step, a fault) before any
  // step whose checks the oracle places them in. Empty when the case ran every step.
  std::vector<std::string> unreached = {};

  bool flaky() const {
    for (Status s : repetitions) {
      if (s != repetitions.front()) return true;
    }
    return false;
  }
};

// One rule's verdict in one case (rule_verdicts_of). `reached` false: the case stopped before
// the rule's checks ran, so it says nothing of the rule (`status` is then kUnsupported).
struct CaseRuleVerdict {
  Status status = Status::kPass;  // PASS, FAIL, XFAIL, XPASS or UNSUPPORTED
  bool reached = true;
  std::string reason;  // why, for people: the failed check, or where the case stopped
};

// "PASS", "FAIL", ... or "NOT_REACHED": how a CaseRuleVerdict reads in reports.
std::string verdict_name(const CaseRuleVerdict& v);

// The one judge of rules: each rule's verdict in case `r`, from its findings. A rule with a
// failed finding is FAIL (XFAIL when the platform expected the case to fail); a rule the case
// names with no failed finding is PASS, or not reached when it is in `r.unreached` or a fault
// ended the case (TIMEOUT, CRASH, HARNESS_ERROR) with no finding of it. A failure without a
// rule (setup, harness) makes no rule red. An XPASS case's rules are XPASS, an UNSUPPORTED
// case's UNSUPPORTED. Rules the case names, then the other rules of its failed findings.
std::vector<std::pair<std::string, CaseRuleVerdict>> rule_verdicts_of(const CaseResult& r);

// A session an earlier etwh run left running (its process had ended), stopped before this run
// began (stale_sessions.h); `stop_status` is what ControlTrace(STOP) returned.
struct StaleSessionStop {
  std::string name;
  unsigned long pid = 0;
  std::uint32_t stop_status = 0;
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
  std::vector<StaleSessionStop> stale_sessions;
};

}  // namespace etwh
