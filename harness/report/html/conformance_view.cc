// The rule-by-platform matrix from `etwh run --json` reports (schema_version 1, 2 or 3).
#include "harness/report/html/view.h"

#include <map>
#include <set>

namespace etwh::report_html {
namespace {

using nlohmann::json;

std::string key_pointer(const std::string& base, std::size_t i) {
  return base + "/" + std::to_string(i);
}

// One case as the page shows it; findings kept as they are (objects), checked to be objects.
json case_entry(const Fields& f, const json& r, const std::string& at, int version) {
  json rules = json::array();
  const json& ids = f.array(r, at, "rules");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i].is_string()) f.fail(key_pointer(at + "/rules", i), "expected a rule id (a string)");
    rules.push_back(ids[i]);
  }
  json findings = json::array();
  if (version >= 2 || r.contains("findings")) {
    const json& list = f.array(r, at, "findings");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object()) f.fail(key_pointer(at + "/findings", i), "expected an object");
      findings.push_back(list[i]);
    }
  }
  // Version 3: each rule's verdict in the case, as the run judged it (result.h
  // rule_verdicts_of); before, every rule the case names shares the case's status.
  json verdicts = json::object();
  if (version >= 3) {
    const json& list = f.array(r, at, "rule_verdicts");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string v_at = key_pointer(at + "/rule_verdicts", i);
      verdicts[f.string(list[i], v_at, "rule")] = {
          {"verdict", f.string(list[i], v_at, "verdict")},
          {"reason", f.optional_string(list[i], v_at, "reason")}};
    }
  } else {
    for (const auto& rule : rules) {
      verdicts[rule.get<std::string>()] = {{"verdict", f.string(r, at, "status")}, {"reason", ""}};
    }
  }
  return {{"id", f.string(r, at, "id")},
          {"status", f.string(r, at, "status")},
          {"message", f.string(r, at, "message")},
          {"duration", f.number(r, at, "duration")},
          {"rules", rules},
          {"verdicts", verdicts},
          {"findings", findings}};
}

struct Column {
  json info;                               // label, file, platform, counts
  std::map<std::string, json> rule_cells;  // rule id -> cell
  json cases = json::object();             // case id -> case entry
};

Column read_run(const Input& in, std::vector<std::string>& rule_order,
                std::set<std::string>& seen_rules) {
  const Fields f(in);
  const json& doc = in.doc;
  const json& v = f.member(doc, "", "schema_version");
  if (!v.is_number_integer() || v.get<int>() < 1 || v.get<int>() > 3) {
    f.fail("/schema_version", "unsupported schema_version " + v.dump() + " (expected 1, 2 or 3)");
  }
  const int version = v.get<int>();
  Column col;
  const json& info = f.object(doc, "", "run_info");
  col.info = {{"file", in.file},
              {"platform", f.string(info, "/run_info", "platform")},
              {"start_time", f.optional_string(info, "/run_info", "start_time")}};
  json counts = json::object();
  std::map<std::string, std::vector<std::string>> cases_of_rule;
  const json& results = f.array(doc, "", "results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    json c = case_entry(f, results[i], key_pointer("/results", i), version);
    const std::string status = c["status"];
    counts[status] = counts.value(status, 0) + 1;
    for (const auto& [rule, v] : c["verdicts"].items()) cases_of_rule[rule].push_back(c["id"]);
    const std::string id = c["id"];
    col.cases[id] = std::move(c);
  }
  col.info["counts"] = counts;
  const json& rules = f.array(doc, "", "rules");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string at = key_pointer("/rules", i);
    const std::string id = f.string(rules[i], at, "id");
    col.rule_cells[id] = {{"status", f.string(rules[i], at, "status")},
                          {"reason", f.optional_string(rules[i], at, "reason")},
                          {"cases", cases_of_rule[id]}};
    if (seen_rules.insert(id).second) rule_order.push_back(id);
  }
  return col;
}

// Column labels: the platform, with the file when two reports name the same platform.
void label_columns(std::vector<Column>& columns) {
  std::map<std::string, int> per_platform;
  for (const Column& c : columns) ++per_platform[c.info["platform"].get<std::string>()];
  for (Column& c : columns) {
    const std::string platform = c.info["platform"];
    c.info["label"] = per_platform[platform] > 1
                          ? platform + " (" + c.info["file"].get<std::string>() + ")"
                          : platform;
  }
}

}  // namespace

json conformance_view(const std::vector<const Input*>& runs) {
  std::vector<std::string> rule_order;
  std::set<std::string> seen;
  std::vector<Column> columns;
  for (const Input* in : runs) columns.push_back(read_run(*in, rule_order, seen));
  label_columns(columns);
  json view = {{"columns", json::array()}, {"rules", json::array()}};
  for (Column& c : columns) {
    c.info["cases"] = std::move(c.cases);
    view["columns"].push_back(std::move(c.info));
  }
  for (const std::string& id : rule_order) {
    json cells = json::array();
    for (const Column& c : columns) {
      auto it = c.rule_cells.find(id);
      cells.push_back(it == c.rule_cells.end() ? json(nullptr) : it->second);
    }
    view["rules"].push_back({{"id", id}, {"cells", cells}});
  }
  return view;
}

}  // namespace etwh::report_html
