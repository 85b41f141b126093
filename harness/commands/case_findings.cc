#include "harness/commands/case_findings.h"

#include "harness/model/json_text.h"
#include "harness/conformance/lint.h"
#include "harness/model/result.h"
#include "harness/model/rules.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

namespace etwh::cli {
namespace {

// A lint finding as the case reports it: its rule, what it says and of what (the descriptor,
// without the case's id, which the result carries: the same warning reads the same in every
// case), and how it counts.
Finding lint_finding(const lint::Finding& f, Severity severity, const std::string& case_id) {
  Finding out;
  out.rule = f.rule;
  out.check = kCheckLint;
  std::string where = f.where;
  if (where.starts_with(case_id + " ")) where.erase(0, case_id.size() + 1);
  out.text = f.message + " (" + where + ")";
  out.evidence = f.where;
  out.severity = severity;
  return out;
}

// The intent of provider `provider` for lint rule `rule` on event `d`, or null.
const lint::Intent* intent_of(const CaseOutcome& outcome, const std::string& provider,
                              const std::string& rule, const lint::Descriptor& d) {
  const auto it = outcome.intended_lint.find(provider);
  if (it == outcome.intended_lint.end()) return nullptr;
  for (const lint::Intent& i : it->second) {
    if (i.matches(rule, d)) return &i;
  }
  return nullptr;
}

// The events a provider under test wrote, linted as the rules' severity says: a failure fails
// the case, warnings are reported with it, and a finding the provider says it means is a note
// (check lint_intended). Each distinct descriptor is named once.
void lint_subject_events(const Case& c, const Catalog& catalog, CaseOutcome& outcome) {
  std::map<std::string, std::vector<lint::Descriptor>> by_provider;
  for (const SubjectEvent& e : outcome.subject_events) {
    by_provider[e.provider].push_back(e.descriptor);
  }
  std::vector<Finding> findings;
  for (const auto& [provider, events] : by_provider) {
    const std::string where = fmt::format("{} provider under test {}", c.id, provider);
    std::set<std::tuple<int, int, int, int, int, std::uint64_t>> seen;
    for (const lint::Descriptor& d : events) {
      if (!seen.insert({d.id, d.version, d.channel, d.level, d.opcode, d.keyword}).second) continue;
      for (auto& f : lint::lint_descriptor(d, where, catalog)) {
        const lint::Intent* intent = intent_of(outcome, provider, f.rule, d);
        if (intent == nullptr || f.severity != Severity::kWarning) {
          findings.push_back(lint_finding(f, f.severity, c.id));
          continue;
        }
        Finding note = lint_finding(f, Severity::kNote, c.id);
        note.check = kCheckLintIntended;
        note.text += ", intended: " + intent->reason;
        findings.push_back(std::move(note));
      }
    }
    for (auto& f : lint::lint_event_set(events, where, catalog))
      findings.push_back(lint_finding(f, f.severity, c.id));
  }
  for (Finding& f : findings) {
    if (f.severity == Severity::kFailure && outcome.status == Status::kPass) {
      outcome.status = Status::kFail;
    }
    outcome.findings.push_back(std::move(f));
  }
}

}  // namespace

// A case with expect_lint passes only if the linter reports exactly the rules it lists: then
// each finding is only a note, and each rule that did not fire, or fired unexpectedly, fails.
void apply_lint(const Case& c, const Catalog& catalog, CaseOutcome& outcome) {
  lint_subject_events(c, catalog, outcome);
  if (!c.expect_lint) return;
  const std::vector<lint::Finding> found = lint::lint_case(c, catalog);
  const lint::Judgement j = lint::judge(*c.expect_lint, found);
  for (const std::string& rule : j.missing) {
    outcome.findings.push_back(failed_check(
        rule, kCheckExpectLint, "lint rule " + rule + " did not fire", "fires", "silent"));
  }
  for (const std::string& rule : j.unexpected) {
    outcome.findings.push_back(failed_check(
        rule, kCheckExpectLint, "lint rule " + rule + " fired unexpectedly", "silent", "fires"));
  }
  for (const lint::Finding& f : found) {
    outcome.findings.push_back(lint_finding(f, Severity::kNote, c.id));
  }
  if (!j.ok && outcome.status == Status::kPass) outcome.status = Status::kFail;
}

// The platform's expectation for the case, when it has one, recorded with the result.
void note_expectation(const Expectations& expectations, const std::string& case_id,
                      CaseOutcome& outcome) {
  auto it = expectations.find(case_id);
  if (it == expectations.end()) return;
  Finding f;
  f.check = kCheckExpectation;
  f.severity = Severity::kNote;
  f.expected = status_name(it->second.status);
  f.observed = status_name(outcome.status);
  f.text = std::string("expected ") + f.expected + ": " + it->second.reason;
  outcome.findings.push_back(std::move(f));
}

void locate_findings(std::vector<Finding>& findings) {
  static std::mutex mutex;
  static std::map<std::string, std::string> texts;  // file -> its text ("" when unreadable)
  std::lock_guard lock(mutex);
  for (Finding& f : findings) {
    if (f.step.file.empty() || f.step.pointer.empty()) continue;
    auto it = texts.find(f.step.file);
    if (it == texts.end()) {
      std::string text;
      try {
        text = read_input_file(f.step.file);
      } catch (const std::exception&) {
        // Unreadable now: the findings keep no position.
      }
      it = texts.emplace(f.step.file, std::move(text)).first;
    }
    if (it->second.empty()) continue;
    const TextPosition at = position_of(it->second, locate_pointer(it->second, f.step.pointer));
    f.step.line = at.line;
    f.step.col = at.col;
  }
}

// The harness blames findings on the rules of harness/model/rules.h: a catalog without one of them
// cannot judge a run.
void require_harness_rules(const Catalog& catalog, const std::filesystem::path& catalog_file) {
  for (std::string_view id : rules::kAll) {
    if (catalog.find(std::string(id)) == nullptr) {
      throw InputError(catalog_file.string(), "/rules",
                       "no rule \"" + std::string(id) + "\", which the harness checks");
    }
  }
}

}  // namespace etwh::cli
