// The report formats of `etwh run` (formats.h), and the shape of the SARIF report: what GitHub
// code scanning reads of SARIF 2.1.0 (version, tool.driver with its rules, a result per failed
// finding with ruleId, level, message and location); the TAP report: the plan, a test point per
// case with its directive, and the YAML block of a case not as expected, whatever its texts hold.
#include "harness/report/formats.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

namespace etwh {
namespace {

using nlohmann::json;

RunInfo info() {
  RunInfo i;
  i.platform = "etwrt";
  i.version = "0.1.0";
  i.command_line = "etwh run --sarif out.sarif";
  return i;
}

// A failed case (a located failure, a lint warning, a note), an XFAIL case and a passing one.
std::vector<CaseResult> sample() {
  Finding level = failed_check("CB-LEVEL-MAX", "Level", "expected level 3, observed 1", "3", "1");
  level.step = {"b-fail", 2, "enable", "/cases/1/steps/2", "f.json", 14, 9};
  Finding lint = failed_check("DESC-CHANNEL", kCheckLint, "WARNING DESC-CHANNEL b-fail: ch");
  lint.severity = Severity::kWarning;
  Finding seen;
  seen.check = kCheckObserved;
  seen.severity = Severity::kNote;
  seen.text = "a value recorded";
  CaseResult fail{"b-fail", {"CB-LEVEL-MAX"}, Status::kFail,      false, "",
                  0.2,      "g.json",         {level, lint, seen}};
  CaseResult xfail{"c-xfail",
                   {"SES-MAX-8"},
                   Status::kXFail,
                   true,
                   "",
                   0.1,
                   "g.json",
                   {failed_check("SES-MAX-8", "status", "the ninth session started")}};
  CaseResult pass{"a-pass", {"CB-ANY-OR"}, Status::kPass, true, "", 0.1, "g.json", {}};
  return {pass, fail, xfail};
}

const ReportFormat& format(const std::string& option) {
  for (const ReportFormat& f : report_formats()) {
    if (f.option == option) return f;
  }
  throw std::runtime_error("no format " + option);
}

TEST(ReportFormats, EachOptionOnceAndEachWriterWrites) {
  std::set<std::string> options;
  for (const ReportFormat& f : report_formats()) {
    EXPECT_TRUE(options.insert(f.option).second) << f.option;
    EXPECT_NE(std::string(f.help), "");
    std::ostringstream out;
    f.make({})->write(info(), sample(), out);
    EXPECT_NE(out.str(), "") << f.option;
  }
  EXPECT_TRUE(options.count("sarif"));
  EXPECT_EQ(std::string(report_format("junit").option), "junit");
  EXPECT_THROW(report_format("no-such-format"), std::out_of_range);
  std::ostringstream direct;
  JsonReport().write(info(), sample(), direct);
  EXPECT_EQ(report_text(report_format("json"), {}, info(), sample()), direct.str());
}

TEST(SarifReport, HasTheShapeCodeScanningReads) {
  std::ostringstream out;
  format("sarif").make({})->write(info(), sample(), out);
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc.at("version"), "2.1.0");
  EXPECT_NE(doc.at("$schema").get<std::string>().find("sarif-2.1.0"), std::string::npos);
  ASSERT_EQ(doc.at("runs").size(), 1u);
  const json& run = doc["runs"][0];
  EXPECT_EQ(run.at("tool").at("driver").at("name"), "etwh");
  std::set<std::string> rules;
  for (const json& r : run["tool"]["driver"].at("rules")) rules.insert(r.at("id"));
  EXPECT_EQ(rules, (std::set<std::string>{"CB-LEVEL-MAX", "DESC-CHANNEL", "SES-MAX-8"}));
  const json& results = run.at("results");
  ASSERT_EQ(results.size(), 3u);  // the note is left out
  for (const json& r : results) {
    EXPECT_TRUE(rules.count(r.at("ruleId").get<std::string>())) << r;
    const std::string level = r.at("level");
    EXPECT_TRUE(level == "error" || level == "warning" || level == "note") << level;
    EXPECT_NE(r.at("message").at("text").get<std::string>(), "");
    ASSERT_EQ(r.at("locations").size(), 1u);
    EXPECT_TRUE(r["locations"][0].at("physicalLocation").at("artifactLocation").contains("uri"));
  }
  const json& located = results[0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(results[0]["ruleId"], "CB-LEVEL-MAX");
  EXPECT_EQ(results[0]["level"], "error");
  EXPECT_EQ(located["artifactLocation"]["uri"], "f.json");
  EXPECT_EQ(located["region"]["startLine"], 14);
  EXPECT_EQ(located["region"]["startColumn"], 9);
  EXPECT_EQ(results[1]["level"], "warning");
  EXPECT_EQ(results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "g.json");
  EXPECT_FALSE(results[1]["locations"][0]["physicalLocation"].contains("region"));
  EXPECT_EQ(results[2]["level"], "note");  // expected on this platform: XFAIL
}

TEST(TapReport, PlanAndOneTestPointPerCase) {
  std::vector<CaseResult> results = sample();
  results[1].message = "step 2: \"quoted\"\nnext";
  Finding expectation;
  expectation.check = kCheckExpectation;
  expectation.severity = Severity::kNote;
  expectation.expected = "FAIL";
  expectation.text = "etwrt has 64";
  results[2].findings.push_back(expectation);
  results.push_back({"d-unsupported #1", {}, Status::kUnsupported, true, "no agent", 0, "", {}});
  EXPECT_EQ(report_text(report_format("tap"), {}, info(), results),
            "TAP version 14\n"
            "1..4\n"
            "# etwh 0.1.0 on etwrt\n"
            "ok 1 - a-pass\n"
            "not ok 2 - b-fail\n"
            "  ---\n"
            "  status: FAIL\n"
            "  expected: PASS\n"
            "  file: \"g.json\"\n"
            "  message: \"step 2: \\\"quoted\\\"\\x0anext\"\n"
            "  findings:\n"
            "    - rule: \"CB-LEVEL-MAX\"\n"
            "      check: \"Level\"\n"
            "      text: \"CB-LEVEL-MAX: expected level 3, observed 1\"\n"
            "      expected: \"3\"\n"
            "      observed: \"1\"\n"
            "      at: \"f.json:14:9\"\n"
            "  ...\n"
            "not ok 3 - c-xfail # TODO etwrt has 64\n"
            "ok 4 - d-unsupported \\#1 # SKIP UNSUPPORTED no agent\n");
  EXPECT_EQ(report_text(report_format("tap"), {}, info(), {}),
            "TAP version 14\n1..0\n# etwh 0.1.0 on etwrt\n");
}

}  // namespace
}  // namespace etwh
