#include "console_report.h"

#include <fmt/format.h>

#include <algorithm>

namespace etwh {

namespace {

bool has_warning(const CaseResult& r) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kWarning; });
}

void write_rule_table(const RunInfo& info, const std::vector<CaseResult>& results,
                      const ConsoleStyle& style, std::ostream& out) {
  out << style.bold(fmt::format("{:<30} {:<14} {}", "RULE", "STATUS", "CASES")) << "\n";
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    const bool fine =
        v.status == Status::kPass || v.status == Status::kXFail || v.status == Status::kUnsupported;
    out << fmt::format(
        "{:<30} {} {}{}\n", v.id,
        style.status(v.status, fine, fmt::format("{:<14}", status_name(v.status))), v.cases,
        v.cases == 0 ? (v.reason.empty() ? " (no case)" : " (" + v.reason + ")") : "");
  }
}

std::string case_line(const CaseResult& r, const ConsoleStyle& style, std::string_view note) {
  return fmt::format("{} {}{}: {}\n", style.status(r.status, r.as_expected, status_name(r.status)),
                     r.id, note, r.message);
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
    write_rule_table(info, results, style, out);
    for (const CaseResult& r : results) {
      if (!r.as_expected) continue;
      if (r.status != Status::kPass)
        out << case_line(r, style, " (expected)");
      else if (has_warning(r))
        out << case_line(r, style, " (warnings)");
    }
  }
  if (!unexpected.empty()) {
    out << style.bold(fmt::format("Not as expected ({}):", unexpected.size())) << "\n";
    for (const CaseResult* r : unexpected) out << case_line(*r, style, "");
  }
  if (!flaky.empty()) {
    out << style.bold(fmt::format("Flaky ({}):", flaky.size())) << "\n";
    for (const CaseResult* r : flaky)
      out << fmt::format("  {}: {}\n", r->id, statuses(r->repetitions));
  }
  out << fmt::format(
      "{} cases, {} not as expected{}, platform {}, {:.2f} s\n", results.size(), unexpected.size(),
      flaky.empty() ? "" : fmt::format(", {} flaky", flaky.size()), info.platform, info.duration_s);
}

}  // namespace etwh
