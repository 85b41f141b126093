// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), the format GitHub code
// scanning reads: one run of the tool "etwh"; a result per failed finding and per lint warning,
// with its rule (ruleId, and the rule in tool.driver.rules), level, message and the place of its
// step in the scenario file (line:col where the loader knew it, else the case's file). A failure
// the platform's expectations name (an XFAIL case) is a "note", not an "error". Notes and values
// recorded without a verdict are left out.
#include "harness/report/formats.h"

#include <nlohmann/json.hpp>

#include <set>

namespace etwh {
namespace {

using nlohmann::json;

const char* level_of(const CaseResult& r, const Finding& f) {
  if (f.severity == Severity::kWarning) return "warning";
  return r.as_expected ? "note" : "error";
}

// The finding's step in its scenario file, else the case's file; none when neither is known.
json locations_of(const CaseResult& r, const Finding& f) {
  const std::string& file = f.step.file.empty() ? r.file : f.step.file;
  if (file.empty()) return json::array();
  json physical = {{"artifactLocation", {{"uri", scenario_path(file, {})}}}};
  if (f.step.line > 0) {
    physical["region"] = {{"startLine", f.step.line}};
    if (f.step.col > 0) physical["region"]["startColumn"] = f.step.col;
  }
  return json::array({{{"physicalLocation", physical}}});
}

json result_of(const CaseResult& r, const Finding& f) {
  json out = {{"level", level_of(r, f)},
              {"message", {{"text", "case " + r.id + ": " + describe(f)}}},
              {"locations", locations_of(r, f)}};
  if (!f.rule.empty()) out["ruleId"] = f.rule;
  return out;
}

class SarifReport : public ReportWriter {
 public:
  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override {
    json found = json::array();
    std::set<std::string> rules;
    for (const CaseResult& r : results) {
      for (const Finding& f : r.findings) {
        if (f.severity == Severity::kNote) continue;
        found.push_back(result_of(r, f));
        if (!f.rule.empty()) rules.insert(f.rule);
      }
    }
    json rule_list = json::array();
    for (const std::string& id : rules) rule_list.push_back({{"id", id}});
    const json driver = {{"name", "etwh"}, {"version", info.version}, {"rules", rule_list}};
    const json run = {
        {"tool", {{"driver", driver}}},
        {"invocations",
         json::array({{{"commandLine", info.command_line}, {"executionSuccessful", true}}})},
        {"properties", {{"platform", info.platform}}},
        {"results", found}};
    out << json{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                {"version", "2.1.0"},
                {"runs", json::array({run})}}
               .dump(2)
        << "\n";
  }
};

}  // namespace

std::unique_ptr<ReportWriter> make_sarif_report(const ReportSettings&) {
  return std::make_unique<SarifReport>();
}

}  // namespace etwh
