#include "harness/report/console_report.h"

#include "harness/report/console_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace etwh {

namespace {

// The rules the run judged (every rule of the catalog, verbose), as RULE STATUS CASES rows.
void write_rule_table(const RunInfo& info, const std::vector<CaseResult>& results,
                      const ConsoleOptions& options, std::ostream& out) {
  const ConsoleStyle& style = options.style;
  const bool all = options.verbosity == Verbosity::kVerbose;
  out << fit(style.bold(fmt::format("{:<30} {:<14} {}", "RULE", "STATUS", "CASES")), options.width)
      << "\n";
  int unjudged = 0;
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    if (v.cases == 0 && !all) {
      ++unjudged;
      continue;
    }
    const bool fine =
        v.status == Status::kPass || v.status == Status::kXFail || v.status == Status::kUnsupported;
    std::string note;
    if (v.cases == 0) {
      note = v.reason.empty() ? " (no case)" : " (" + v.reason + ")";
    } else if (v.not_reached > 0) {
      note = fmt::format(" ({} not reached)", v.not_reached);
    }
    out << fit(fmt::format(
                   "{:<30} {} {}{}", v.id,
                   style.status(v.status, fine, fmt::format("{:<14}", status_name(v.status))),
                   v.cases, note),
               options.width)
        << "\n";
  }
  if (unjudged > 0)
    out << fit(fmt::format("({} rules of the catalog no case here judges: -v lists them)",
                           unjudged),
               options.width)
        << "\n";
}

// Each warning once, its rule kept when the text is cut, and under it the cases that raised it.
void write_warnings(const std::vector<CaseResult>& results, const ConsoleOptions& options,
                    std::ostream& out) {
  for (const WarningGroup& g : group_warnings(results)) {
    const std::string rule = g.rule.empty() ? "" : " [" + g.rule + "]";
    const std::string line = (g.location.empty() ? "" : g.location + ": ") +
                             options.style.severity(Severity::kWarning, "warning:") + " " + g.text;
    if (options.width == 0 || options.width > rule.size() + 10) {
      out << fit(line, options.width == 0 ? 0 : options.width - rule.size()) << rule << "\n";
    } else {
      out << fit(line + rule, options.width) << "\n";
    }
    out << fit(g.cases.size() == 1
                   ? fmt::format("    in {}", g.cases.front())
                   : fmt::format("    in {} cases: {}", g.cases.size(), fmt::join(g.cases, ", ")),
               options.width)
        << "\n";
  }
}

// How many distinct lint findings the providers under test said they mean (notes: -v shows
// them), counted once however many cases raised them.
std::size_t intended_lint_count(const std::vector<CaseResult>& results) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const CaseResult& r : results) {
    for (const Finding& f : r.findings) {
      if (f.check == kCheckLintIntended) seen.emplace(f.rule, f.text);
    }
  }
  return seen.size();
}

// The rules a case's failure is blamed on ("" when none: a fault or an unforeseen status).
std::string red_rules(const CaseResult& r) {
  std::vector<std::string> red;
  for (const auto& [rule, v] : rule_verdicts_of(r)) {
    if (v.reached && v.status != Status::kPass && v.status != Status::kUnsupported)
      red.push_back(rule);
  }
  return red.empty() ? "" : fmt::format(" [{}]", fmt::join(red, ", "));
}

std::string statuses(const std::vector<Status>& seen) {
  std::string out;
  for (Status s : seen) out += (out.empty() ? "" : ", ") + std::string(status_name(s));
  return out;
}

}  // namespace

void ConsoleReport::write(const RunInfo& info, const std::vector<CaseResult>& results,
                          std::ostream& out) const {
  const ConsoleStyle& style = options_.style;
  std::vector<const CaseResult*> unexpected, flaky;
  for (const CaseResult& r : results) {
    if (!r.as_expected) unexpected.push_back(&r);
    if (r.flaky()) flaky.push_back(&r);
  }
  if (options_.verbosity != Verbosity::kQuiet) {
    write_rule_table(info, results, options_, out);
    // Verbose printed every warning under its case already.
    if (options_.verbosity == Verbosity::kNormal) {
      write_warnings(results, options_, out);
      if (const std::size_t n = intended_lint_count(results); n > 0) {
        out << fit(fmt::format("({} lint finding{} the providers under test intend: -v lists them)",
                               n, n == 1 ? "" : "s"),
                   options_.width)
            << "\n";
      }
    }
  }
  if (!unexpected.empty()) {
    out << style.bold(fmt::format("Not as expected ({}):", unexpected.size())) << "\n";
    for (const CaseResult* r : unexpected) {
      out << fit(fmt::format("  {} {}{}", style.status(r->status, false, status_name(r->status)),
                             r->id, red_rules(*r)),
                 options_.width)
          << "\n";
    }
  }
  if (!flaky.empty()) {
    out << style.bold(fmt::format("Flaky ({}):", flaky.size())) << "\n";
    for (const CaseResult* r : flaky)
      out << fit(fmt::format("  {}: {}", r->id, statuses(r->repetitions)), options_.width) << "\n";
  }
  out << fit(fmt::format("{} cases, {} not as expected{}, platform {}, {:.2f} s", results.size(),
                         unexpected.size(),
                         flaky.empty() ? "" : fmt::format(", {} flaky", flaky.size()),
                         info.platform, info.duration_s),
             options_.width)
      << "\n";
}

}  // namespace etwh
