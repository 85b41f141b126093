// `etwh run --markdown`: the run for a CI job summary or a merge-request comment.
#include "harness/report/report.h"

#include <fmt/format.h>

#include <map>

namespace etwh {
namespace {

constexpr std::size_t kMaxCellChars = 200;

// A table cell: one line, no column break, and short.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (out.size() > kMaxCellChars) {
    out.resize(kMaxCellChars);
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// The status shown, and for a flaky case every repetition's.
std::string status_cell(const CaseResult& r) {
  std::string s = fmt::format("**{}**", status_name(r.status));
  if (r.flaky()) {
    std::vector<std::string> seen;
    for (Status st : r.repetitions) seen.push_back(status_name(st));
    s += " (flaky: " + joined(seen) + ")";
  }
  return s;
}

void not_as_expected_table(const std::string& scenarios_dir,
                           const std::vector<const CaseResult*>& bad, std::ostream& out) {
  out << "| case | status | expected | rules | file | why |\n|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < bad.size() && i < MarkdownReport::kMaxRows; ++i) {
    const CaseResult& r = *bad[i];
    out << fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", cell(r.id), status_cell(r),
                       status_name(expected_status(r)), cell(joined(r.rules)),
                       cell(scenario_path(r.file, scenarios_dir)), cell(r.message));
  }
  if (bad.size() > MarkdownReport::kMaxRows) {
    out << fmt::format("\n...and {} more: the JUnit or JSON report has them all.\n",
                       bad.size() - MarkdownReport::kMaxRows);
  }
  out << "\n";
}

}  // namespace

void MarkdownReport::write(const RunInfo& info, const std::vector<CaseResult>& results,
                           std::ostream& out) const {
  std::vector<const CaseResult*> bad;
  std::map<std::string, int> per_status;
  for (const CaseResult& r : results) {
    if (!r.as_expected || r.flaky()) bad.push_back(&r);
    ++per_status[status_name(r.status)];
  }
  if (bad.empty()) {
    out << fmt::format("### etwh run on {}: all {} cases as expected\n\n", info.platform,
                       results.size());
  } else {
    out << fmt::format("### etwh run on {}: {} of {} cases not as expected\n\n", info.platform,
                       bad.size(), results.size());
    not_as_expected_table(scenarios_dir_, bad, out);
  }
  out << "| status | cases |\n|---|---:|\n";
  for (const auto& [status, count] : per_status) out << fmt::format("| {} | {} |\n", status, count);
  std::vector<std::string> judged_not_pass, not_reached;
  std::size_t judged = 0;
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    if (v.cases == 0) continue;      // no case in this run: not judged here
    if (v.not_reached == v.cases) {  // every case stopped before its checks: not judged either
      not_reached.push_back(fmt::format("`{}`", v.id));
      continue;
    }
    ++judged;
    if (v.status != Status::kPass) {
      judged_not_pass.push_back(fmt::format("`{}` {}", v.id, status_name(v.status)));
    }
  }
  const auto joined = [](const std::vector<std::string>& items) {
    std::string list;
    for (const std::string& s : items) list += (list.empty() ? "" : ", ") + s;
    return list;
  };
  out << fmt::format("\n{} rules judged", judged);
  if (!judged_not_pass.empty()) {
    out << fmt::format("; not PASS ({}): {}", judged_not_pass.size(), joined(judged_not_pass));
  }
  if (!not_reached.empty()) {
    out << fmt::format("; not reached ({}): {}", not_reached.size(), joined(not_reached));
  }
  out << fmt::format(".\n\n<sub>etwh {}, {}, {:.1f} s</sub>\n", info.version, info.host,
                     info.duration_s);
}

}  // namespace etwh
