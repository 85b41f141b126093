#include "report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include <algorithm>
#include <map>

namespace etwh {

namespace {

// Higher is worse, so that a rule shows the most alarming outcome among its cases.
int severity(Status s) {
  switch (s) {
    case Status::kPass: return 0;
    case Status::kXFail: return 1;
    case Status::kUnsupported: return 2;
    case Status::kXPass: return 3;
    case Status::kFail: return 4;
    case Status::kTimeout: return 5;
    case Status::kCrash: return 6;
    case Status::kHarnessError: return 7;
  }
  return 7;
}

nlohmann::ordered_json finding_json(const Finding& f) {
  nlohmann::ordered_json out{{"rule", f.rule},
                             {"check", f.check},
                             {"severity", severity_name(f.severity)},
                             {"text", f.text}};
  if (!f.expected.empty()) out["expected"] = f.expected;
  if (!f.observed.empty()) out["observed"] = f.observed;
  if (!f.step.pointer.empty()) {
    out["step"] = {{"case", f.step.case_id}, {"op", f.step.op}, {"pointer", f.step.pointer},
                   {"file", f.step.file}};
    if (f.step.index) out["step"]["index"] = *f.step.index;
  }
  if (!f.evidence.empty()) out["evidence"] = f.evidence;
  return out;
}

// One line per finding that is not a note: "<severity> <rule>: <text>".
std::string findings_text(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kNote) continue;
    out += fmt::format("{} {}\n", severity_name(f.severity), describe(f));
  }
  return out;
}

}  // namespace

std::vector<RuleVerdict> rule_verdicts(const RunInfo& info,
                                       const std::vector<CaseResult>& results) {
  std::map<std::string, RuleVerdict> named;
  for (const CaseResult& r : results) {
    for (const std::string& rule : r.rules) {
      RuleVerdict& v = named[rule];
      if (v.cases == 0 || severity(r.status) > severity(v.status)) v.status = r.status;
      ++v.cases;
    }
  }
  std::vector<RuleVerdict> out;
  for (const std::string& id : info.catalog_rules) {
    auto it = named.find(id);
    out.push_back(it == named.end() ? RuleVerdict{id, Status::kUnsupported, 0, {}} : it->second);
    out.back().id = id;
    if (auto r = info.unsupported_reasons.find(id);
        out.back().cases == 0 && r != info.unsupported_reasons.end())
      out.back().reason = r->second;
    if (it != named.end()) named.erase(it);
  }
  for (auto& [id, v] : named) {
    out.push_back(v);
    out.back().id = id;
  }
  return out;
}

void JsonReport::write(const RunInfo& info, const std::vector<CaseResult>& results,
                       std::ostream& out) const {
  // Ordered, so that the file reads in the documented order.
  nlohmann::ordered_json doc;
  doc["schema_version"] = 2;
  doc["run_info"] = {{"platform", info.platform},     {"etwh_version", info.version},
                     {"start_time", info.start_time}, {"host", info.host},
                     {"duration", info.duration_s},   {"command_line", info.command_line}};
  doc["results"] = nlohmann::ordered_json::array();
  for (const CaseResult& r : results) {
    nlohmann::ordered_json result{{"id", r.id},
                                  {"rules", r.rules},
                                  {"status", status_name(r.status)},
                                  {"as_expected", r.as_expected},
                                  {"message", r.message},
                                  {"duration", r.duration_s}};
    result["findings"] = nlohmann::ordered_json::array();
    for (const Finding& f : r.findings) result["findings"].push_back(finding_json(f));
    doc["results"].push_back(std::move(result));
  }
  doc["rules"] = nlohmann::ordered_json::array();
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    nlohmann::ordered_json rule{
        {"id", v.id}, {"status", status_name(v.status)}, {"cases", v.cases}};
    if (!v.reason.empty()) rule["reason"] = v.reason;
    doc["rules"].push_back(std::move(rule));
  }
  out << doc.dump(2) << "\n";
}

void JunitReport::write(const RunInfo& info, const std::vector<CaseResult>& results,
                        std::ostream& out) const {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  auto suite = suites.append_child("testsuite");
  int failures = 0, errors = 0, skipped = 0;
  for (const CaseResult& r : results) {
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") = ("etwh." + info.platform).c_str();
    tc.append_attribute("name") = r.id.c_str();
    tc.append_attribute("time") = fmt::format("{:.3f}", r.duration_s).c_str();
    std::string rules;
    for (const std::string& rule : r.rules) rules += (rules.empty() ? "" : " ") + rule;
    auto props = tc.append_child("properties");
    auto prop = props.append_child("property");
    prop.append_attribute("name") = "rules";
    prop.append_attribute("value") = rules.c_str();
    auto st = props.append_child("property");
    st.append_attribute("name") = "status";
    st.append_attribute("value") = status_name(r.status);
    if (r.status == Status::kUnsupported && r.as_expected) {
      tc.append_child("skipped").append_attribute("message") = r.message.c_str();
      ++skipped;
    } else if (!r.as_expected) {
      const bool is_error = r.status == Status::kHarnessError;
      auto f = tc.append_child(is_error ? "error" : "failure");
      f.append_attribute("type") = status_name(r.status);
      f.append_attribute("message") = r.message.c_str();
      if (const std::string body = findings_text(r.findings); !body.empty()) {
        f.text().set(body.c_str());
      }
      (is_error ? errors : failures)++;
    }
  }
  suite.prepend_attribute("time") = fmt::format("{:.3f}", info.duration_s).c_str();
  suite.prepend_attribute("skipped") = skipped;
  suite.prepend_attribute("errors") = errors;
  suite.prepend_attribute("failures") = failures;
  suite.prepend_attribute("tests") = static_cast<unsigned>(results.size());
  suite.prepend_attribute("timestamp") = info.start_time.c_str();
  suite.prepend_attribute("hostname") = info.host.c_str();
  suite.prepend_attribute("name") = ("etwh conformance (" + info.platform + ")").c_str();
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
}

}  // namespace etwh
