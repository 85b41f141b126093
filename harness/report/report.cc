#include "harness/report/report.h"

#include "harness/report/console_lines.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include <algorithm>
#include <filesystem>
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
    out["step"] = {{"case", f.step.case_id},
                   {"op", f.step.op},
                   {"pointer", f.step.pointer},
                   {"file", f.step.file}};
    if (f.step.index) out["step"]["index"] = *f.step.index;
    if (f.step.line != 0) {
      out["step"]["line"] = f.step.line;
      out["step"]["col"] = f.step.col;
    }
  }
  if (!f.evidence.empty()) out["evidence"] = f.evidence;
  if (f.event) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::array();
    for (const DecodedField& d : f.event->fields) {
      fields.push_back({{"name", d.name}, {"value", d.value}});
    }
    out["event"] = {{"name", f.event->name}, {"fields", std::move(fields)}};
  }
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

std::string scenario_path(const std::string& file, const std::string& scenarios_dir) {
  if (file.empty() || scenarios_dir.empty()) return display_path(file);
  std::error_code ec;
  const std::filesystem::path root =
      std::filesystem::absolute(scenarios_dir, ec).lexically_normal();
  const std::filesystem::path path = std::filesystem::absolute(file, ec).lexically_normal();
  if (ec) return display_path(file);
  const std::filesystem::path relative = path.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return display_path(file);
  return relative.generic_string();
}

namespace {

// The platform's expectation recorded with the case (harness note_expectation), if any.
const Finding* expectation_of(const CaseResult& r) {
  for (const Finding& f : r.findings) {
    if (f.check == kCheckExpectation && f.severity == Severity::kNote) return &f;
  }
  return nullptr;
}

}  // namespace

Status expected_status(const CaseResult& r) {
  const Finding* e = expectation_of(r);
  if (e == nullptr) return Status::kPass;
  return parse_status(e->expected).value_or(Status::kPass);
}

std::vector<RuleVerdict> rule_verdicts(const RunInfo& info,
                                       const std::vector<CaseResult>& results) {
  std::map<std::string, RuleVerdict> named;
  for (const CaseResult& r : results) {
    for (const auto& [rule, verdict] : rule_verdicts_of(r)) {
      RuleVerdict& v = named[rule];
      const bool first_reached = v.cases == v.not_reached;
      ++v.cases;
      if (!verdict.reached) {
        ++v.not_reached;
        continue;
      }
      if (first_reached || severity(verdict.status) > severity(v.status)) v.status = verdict.status;
    }
  }
  for (auto& [id, v] : named) {
    if (v.cases == v.not_reached) {
      v.status = Status::kUnsupported;
      v.reason = fmt::format("not reached: its {} stopped before its checks",
                             v.cases == 1 ? "case" : fmt::format("{} cases", v.cases));
    }
  }
  std::vector<RuleVerdict> out;
  for (const std::string& id : info.catalog_rules) {
    auto it = named.find(id);
    out.push_back(it == named.end() ? RuleVerdict{id, Status::kUnsupported, 0, 0, {}} : it->second);
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
  doc["schema_version"] = 3;
  doc["run_info"] = {{"platform", info.platform},     {"etwh_version", info.version},
                     {"start_time", info.start_time}, {"host", info.host},
                     {"duration", info.duration_s},   {"command_line", info.command_line}};
  nlohmann::ordered_json stale = nlohmann::ordered_json::array();
  for (const StaleSessionStop& s : info.stale_sessions) {
    stale.push_back({{"name", s.name}, {"pid", s.pid}, {"stop_status", s.stop_status}});
  }
  doc["run_info"]["stale_sessions"] = std::move(stale);
  doc["results"] = nlohmann::ordered_json::array();
  for (const CaseResult& r : results) {
    nlohmann::ordered_json result{{"id", r.id},
                                  {"rules", r.rules},
                                  {"status", status_name(r.status)},
                                  {"expected", status_name(expected_status(r))},
                                  {"as_expected", r.as_expected},
                                  {"message", r.message},
                                  {"duration", r.duration_s},
                                  {"file", display_path(r.file)}};
    // --repeat N: every repetition's status; differing statuses make the case flaky.
    if (r.repetitions.size() > 1) {
      result["repetitions"] = nlohmann::ordered_json::array();
      for (Status s : r.repetitions) result["repetitions"].push_back(status_name(s));
      result["flaky"] = r.flaky();
    }
    result["findings"] = nlohmann::ordered_json::array();
    for (const Finding& f : r.findings) result["findings"].push_back(finding_json(f));
    result["rule_verdicts"] = nlohmann::ordered_json::array();
    for (const auto& [rule, v] : rule_verdicts_of(r)) {
      result["rule_verdicts"].push_back(
          {{"rule", rule}, {"verdict", verdict_name(v)}, {"reason", v.reason}});
    }
    doc["results"].push_back(std::move(result));
  }
  doc["rules"] = nlohmann::ordered_json::array();
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    nlohmann::ordered_json rule{{"id", v.id},
                                {"status", status_name(v.status)},
                                {"cases", v.cases},
                                {"not_reached", v.not_reached}};
    if (!v.reason.empty()) rule["reason"] = v.reason;
    doc["rules"].push_back(std::move(rule));
  }
  out << doc.dump(2) << "\n";
}

namespace {

// JUnit readers group cases by classname (GitLab's "suite"): the scenario file as
// scenario_path names it, dotted, without ".json" ("sourceid", "sub.file"), as a test module
// would be named; a file outside both folders by its name alone, never its absolute path.
std::string junit_classname(const std::string& file, const std::string& scenarios_dir,
                            const std::string& platform) {
  std::string name = scenario_path(file, scenarios_dir);
  if (name.empty()) return "etwh." + platform;
  if (std::filesystem::path(name).is_absolute() || name.starts_with("/")) {
    name = std::filesystem::path(name).filename().generic_string();
  }
  if (name.size() > 5 && name.ends_with(".json")) name.resize(name.size() - 5);
  std::replace(name.begin(), name.end(), '/', '.');
  while (!name.empty() && name.front() == '.') name.erase(0, 1);
  return name;
}

void add_property(pugi::xml_node properties, const char* name, const std::string& value) {
  auto p = properties.append_child("property");
  p.append_attribute("name") = name;
  p.append_attribute("value") = value.c_str();
}

struct JunitCounts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
};

// One case: not as expected is a <failure> (an <error> for a harness fault) whose body is the
// summary and then the findings; an expected non-PASS (XFAIL, UNSUPPORTED, ...) is <skipped>
// with the expectation's reason, as pytest writes xfail; the rules and statuses go to
// <system-out>, since xunit2 allows no <properties> in a testcase.
void junit_case(pugi::xml_node suite, const CaseResult& r, const std::string& scenarios_dir,
                const std::string& platform, JunitCounts& counts) {
  auto tc = suite.append_child("testcase");
  tc.append_attribute("classname") = junit_classname(r.file, scenarios_dir, platform).c_str();
  tc.append_attribute("name") = r.id.c_str();
  if (!r.file.empty()) tc.append_attribute("file") = scenario_path(r.file, scenarios_dir).c_str();
  tc.append_attribute("time") = fmt::format("{:.3f}", r.duration_s).c_str();
  ++counts.tests;
  const Finding* expectation = expectation_of(r);
  if (!r.as_expected) {
    const bool is_error = r.status == Status::kHarnessError;
    auto f = tc.append_child(is_error ? "error" : "failure");
    f.append_attribute("type") = status_name(r.status);
    f.append_attribute("message") = r.message.c_str();
    const std::string findings = findings_text(r.findings);
    f.text().set((r.message + (findings.empty() ? "\n" : "\n\n" + findings)).c_str());
    (is_error ? counts.errors : counts.failures)++;
  } else if (r.flaky()) {
    // The run fails on a flaky case (exit 1) even when the status shown was expected.
    std::string seen;
    for (Status st : r.repetitions)
      seen += (seen.empty() ? "" : ", ") + std::string(status_name(st));
    auto f = tc.append_child("failure");
    f.append_attribute("type") = "FLAKY";
    f.append_attribute("message") = ("flaky across repetitions: " + seen).c_str();
    f.text().set(("flaky across repetitions: " + seen + "\n").c_str());
    ++counts.failures;
  } else if (r.status != Status::kPass) {
    auto s = tc.append_child("skipped");
    s.append_attribute("type") = status_name(r.status);
    s.append_attribute("message") =
        (expectation != nullptr ? expectation->text : r.message).c_str();
    ++counts.skipped;
  }
  std::string rules;
  for (const std::string& rule : r.rules) rules += (rules.empty() ? "" : " ") + rule;
  // Each rule's own verdict in the case (the one judge, rule_verdicts_of), one a line.
  std::string verdicts;
  for (const auto& [rule, v] : rule_verdicts_of(r))
    verdicts += fmt::format("rule {}: {} ({})\n", rule, verdict_name(v), v.reason);
  tc.append_child("system-out")
      .text()
      .set(fmt::format("rules: {}\nstatus: {}\nexpected: {}\n{}", rules, status_name(r.status),
                       status_name(expected_status(r)), verdicts)
               .c_str());
}

// A rule that no case of the run names, as a skipped testcase with the catalog's reason, so
// that CI shows every rule.
void junit_uncovered_rule(pugi::xml_node suite, const RuleVerdict& v, JunitCounts& counts) {
  auto tc = suite.append_child("testcase");
  tc.append_attribute("classname") = "rules";
  tc.append_attribute("name") = v.id.c_str();
  tc.append_attribute("time") = "0.000";
  auto s = tc.append_child("skipped");
  s.append_attribute("type") = status_name(Status::kUnsupported);
  s.append_attribute("message") = (v.reason.empty() ? "no case" : v.reason).c_str();
  ++counts.tests;
  ++counts.skipped;
}

void set_counts(pugi::xml_node node, const JunitCounts& counts, double duration_s) {
  node.append_attribute("tests") = counts.tests;
  node.append_attribute("failures") = counts.failures;
  node.append_attribute("errors") = counts.errors;
  node.append_attribute("skipped") = counts.skipped;
  node.append_attribute("time") = fmt::format("{:.3f}", duration_s).c_str();
}

}  // namespace

void JunitReport::write(const RunInfo& info, const std::vector<CaseResult>& results,
                        std::ostream& out) const {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = "etwh";
  auto suite = suites.append_child("testsuite");
  suite.append_attribute("name") = ("etwh conformance (" + info.platform + ")").c_str();
  suite.append_attribute("hostname") = info.host.c_str();
  suite.append_attribute("timestamp") = info.start_time.c_str();
  auto properties = suite.append_child("properties");
  add_property(properties, "platform", info.platform);
  add_property(properties, "etwh_version", info.version);
  add_property(properties, "command_line", info.command_line);
  JunitCounts counts;
  for (const CaseResult& r : results) {
    junit_case(suite, r, scenarios_dir_, info.platform, counts);
  }
  for (const RuleVerdict& v : rule_verdicts(info, results)) {
    if (v.cases == 0) junit_uncovered_rule(suite, v, counts);
  }
  set_counts(suite, counts, info.duration_s);
  set_counts(suites, counts, info.duration_s);
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
}

}  // namespace etwh
