#include "harness/model/result.h"

#include <fmt/format.h>

#include <algorithm>

namespace etwh {

namespace {

constexpr Status kAllStatuses[] = {Status::kPass,  Status::kFail,        Status::kXFail,
                                   Status::kXPass, Status::kUnsupported, Status::kTimeout,
                                   Status::kCrash, Status::kHarnessError};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : separator) + p;
  return s;
}

// The step failures, one "step P (op): ..." group per step in order of appearance.
std::vector<std::string> step_groups(const std::vector<Finding>& findings) {
  std::vector<std::string> groups;
  const StepLocation* open = nullptr;
  for (const Finding& f : findings) {
    if (f.severity != Severity::kFailure || f.check == kCheckLint || f.check == kCheckExpectLint ||
        f.check == kCheckFault)
      continue;
    if (open != nullptr && open->pointer == f.step.pointer) {
      groups.back() += "; " + describe(f);
      continue;
    }
    open = &f.step;
    groups.push_back((f.step.pointer.empty()
                          ? std::string()
                          : fmt::format("step {} ({}): ", f.step.pointer, f.step.op)) +
                     describe(f));
  }
  return groups;
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass: return "PASS";
    case Status::kFail: return "FAIL";
    case Status::kXFail: return "XFAIL";
    case Status::kXPass: return "XPASS";
    case Status::kUnsupported: return "UNSUPPORTED";
    case Status::kTimeout: return "TIMEOUT";
    case Status::kCrash: return "CRASH";
    case Status::kHarnessError: return "HARNESS_ERROR";
  }
  return "HARNESS_ERROR";
}

std::optional<Status> parse_status(const std::string& s) {
  for (Status st : kAllStatuses) {
    if (s == status_name(st)) return st;
  }
  return std::nullopt;
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kFailure: return "failure";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "failure";
}

Finding failed_check(std::string rule, std::string check, std::string text, std::string expected,
                     std::string observed) {
  Finding f;
  f.rule = std::move(rule);
  f.check = std::move(check);
  f.text = std::move(text);
  f.expected = std::move(expected);
  f.observed = std::move(observed);
  return f;
}

Finding observed_note(std::string text, std::string rule) {
  Finding f;
  f.rule = std::move(rule);
  f.check = kCheckObserved;
  f.text = std::move(text);
  f.severity = Severity::kNote;
  return f;
}

std::string describe(const DecodedEvent& e) {
  std::string out = (e.name.empty() ? "(unnamed)" : e.name) + "(";
  for (std::size_t i = 0; i < e.fields.size(); ++i) {
    out += (i ? ", " : "") + e.fields[i].name + "=" + e.fields[i].value;
  }
  return out + ")";
}

std::string describe(const Finding& f) {
  const std::string event = f.event ? " [event " + describe(*f.event) + "]" : "";
  if (!f.rule.empty()) return f.rule + ": " + f.text + event;
  // A failed check with no rule is a step that only prepares the case (or what ended it).
  const bool setup = f.severity == Severity::kFailure && f.check != kCheckFault;
  return (setup ? "setup: " + f.text : f.text) + event;
}

std::string summarize(const std::vector<Finding>& findings, const std::string& fault) {
  std::vector<std::string> parts = step_groups(findings);
  if (!fault.empty()) parts.push_back(fault);
  bool failed = !parts.empty();
  for (const Finding& f : findings) failed = failed || f.severity == Severity::kFailure;
  std::vector<std::string> lint, intended, expect_lint, notes, expectation;
  for (const Finding& f : findings) {
    if (f.check == kCheckLint) {
      lint.push_back(f.text);
    } else if (f.check == kCheckLintIntended) {
      intended.push_back(f.text);
    } else if (f.check == kCheckExpectLint) {
      expect_lint.push_back(f.text);
    } else if (f.check == kCheckExpectation) {
      expectation.push_back(f.text);
    } else if (f.severity == Severity::kNote) {
      notes.push_back(f.text);
    }
  }
  // What was only observed matters when nothing failed: then it is all the case says.
  if (!failed && !notes.empty()) {
    parts.push_back("observed (not judged): " + join(notes, "; "));
  }
  if (!lint.empty()) parts.push_back("lint: " + join(lint, "; "));
  if (!intended.empty()) parts.push_back("lint, as the provider intends: " + join(intended, "; "));
  if (!expect_lint.empty()) parts.push_back(join(expect_lint, "; "));
  for (const std::string& e : expectation) parts.push_back(e);
  return join(parts, " | ");
}

std::string verdict_name(const CaseRuleVerdict& v) {
  return v.reached ? status_name(v.status) : "NOT_REACHED";
}

namespace {

std::string step_text(const StepLocation& at) {
  return at.index ? fmt::format(" at step {} ({})", *at.index, at.op) : std::string();
}

bool is_fault(Status s) {
  return s == Status::kTimeout || s == Status::kCrash || s == Status::kHarnessError;
}

// Where the case stopped, for a rule it never reached.
std::string stop_text(const CaseResult& r) {
  for (const Finding& f : r.findings) {
    if (f.severity == Severity::kFailure && f.step.index)
      return fmt::format("the case stopped{} ({})", step_text(f.step), status_name(r.status));
  }
  return fmt::format("the case stopped ({}) before its checks ran", status_name(r.status));
}

}  // namespace

std::vector<std::pair<std::string, CaseRuleVerdict>> rule_verdicts_of(const CaseResult& r) {
  std::vector<std::pair<std::string, CaseRuleVerdict>> out;
  std::map<std::string, const Finding*> failed;  // rule -> its first failed finding
  for (const Finding& f : r.findings) {
    if (f.severity == Severity::kFailure && !f.rule.empty()) failed.emplace(f.rule, &f);
  }
  const auto verdict = [&](const std::string& rule) {
    CaseRuleVerdict v;
    const auto hit = failed.find(rule);
    const bool unreached =
        std::find(r.unreached.begin(), r.unreached.end(), rule) != r.unreached.end();
    if (r.status == Status::kUnsupported) {
      v.status = Status::kUnsupported;
      v.reason = "the case is UNSUPPORTED";
    } else if (hit != failed.end()) {
      // An expectation is per case: an expected FAIL covers every failed check of the case.
      v.status = r.status == Status::kXFail ? Status::kXFail : Status::kFail;
      const std::string& check = hit->second->check;
      v.reason =
          (check.empty() ? "a check" : "check " + check) + " failed" + step_text(hit->second->step);
    } else if (r.status == Status::kXPass) {
      v.status = Status::kXPass;
      v.reason = "its checks passed; the platform's expectations say the case fails";
    } else if (unreached || is_fault(r.status)) {
      v.status = Status::kUnsupported;
      v.reached = false;
      v.reason = unreached ? stop_text(r) + ", before its checks"
                           : fmt::format("the case ended in {}", status_name(r.status));
    } else {
      v.reason = "its checks passed";
    }
    return v;
  };
  for (const std::string& rule : r.rules) out.emplace_back(rule, verdict(rule));
  for (const auto& [rule, f] : failed) {
    if (std::find(r.rules.begin(), r.rules.end(), rule) == r.rules.end())
      out.emplace_back(rule, verdict(rule));
  }
  return out;
}

}  // namespace etwh
