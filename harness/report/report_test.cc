#include "harness/report/console_report.h"
#include "harness/report/report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include <sstream>

namespace etwh {
namespace {

RunInfo info() {
  RunInfo i;
  i.platform = "etwrt";
  i.version = "0.1.0";
  i.start_time = "2026-01-01T00:00:00Z";
  i.host = "h";
  i.duration_s = 1.5;
  i.command_line = "etwh run";
  return i;
}

std::vector<CaseResult> sample() {
  CaseResult pass{"a-pass", {"CB-LEVEL-MAX", "CB-ANY-OR"}, Status::kPass, true, "", 0.1, "", {}};
  CaseResult fail{"b-fail",
                  {"CB-LEVEL-MAX"},
                  Status::kFail,
                  false,
                  "CB-LEVEL-MAX: expected level 3, observed 1 <&\"'>",
                  0.2,
                  "",
                  {}};
  Finding level =
      failed_check("CB-LEVEL-MAX", "Level", "expected level 3, observed 1 <&\"'>", "3", "1");
  level.step = {"b-fail", 2, "enable", "/cases/1/steps/2", "f.json"};
  Finding lint = failed_check("DESC-CHANNEL", kCheckLint, "WARNING DESC-CHANNEL b-fail: ch");
  lint.severity = Severity::kWarning;
  Finding seen;
  seen.check = kCheckObserved;
  seen.text = "Level 3";
  seen.severity = Severity::kNote;
  fail.findings = {level, lint, seen};
  CaseResult xfail{"c-xfail", {"TR-SET-ONCE"}, Status::kXFail, true, "known", 0.0, "", {}};
  xfail.findings = {failed_check("TR-SET-ONCE", "status", "set twice", "0", "87")};
  CaseResult herr{"d-herr", {"CB-ANY-OR"}, Status::kHarnessError, false, "spawn failed", 0, "", {}};
  CaseResult skip{"e-skip", {"SES-MAX-8"}, Status::kUnsupported, true, "n/a", 0, "", {}};
  return {pass, fail, xfail, herr, skip};
}

// What the report writer `Writer` makes of `results`.
// What `writer` writes of a run.
std::string written(const ReportWriter& writer, const RunInfo& i,
                    const std::vector<CaseResult>& results) {
  std::ostringstream out;
  writer.write(i, results, out);
  return out.str();
}
template <typename Writer>
std::string written(const RunInfo& i, const std::vector<CaseResult>& results) {
  return written(Writer(), i, results);
}

// The note an expectation leaves on a case (case_findings.cc): what it expected, what came.
Finding expectation_note(const std::string& expected, const std::string& observed,
                         const std::string& text) {
  Finding note;
  note.check = kCheckExpectation;
  note.severity = Severity::kNote;
  note.expected = expected;
  note.observed = observed;
  note.text = text;
  return note;
}

TEST(ConsoleReport, RuleTakesWorstStatusAndListsNonPass) {
  const std::string text = written(ConsoleReport(), info(), sample());
  EXPECT_NE(text.find("CB-LEVEL-MAX                   FAIL           2"), std::string::npos)
      << text;
  // A harness error blames no rule: CB-ANY-OR passed in a-pass, d-herr never reached it.
  EXPECT_NE(text.find("CB-ANY-OR                      PASS           2 (1 not reached)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("TR-SET-ONCE                    XFAIL          1"), std::string::npos);
  EXPECT_NE(text.find("  FAIL b-fail [CB-LEVEL-MAX]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  HARNESS_ERROR d-herr\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("a-pass"), std::string::npos);
  EXPECT_NE(text.find("5 cases, 2 not as expected"), std::string::npos) << text;
}

TEST(JsonReport, SchemaFields) {
  auto doc = nlohmann::json::parse(written(JsonReport(), info(), sample()));
  EXPECT_EQ(doc["schema_version"], 3);
  EXPECT_EQ(doc["run_info"]["platform"], "etwrt");
  EXPECT_EQ(doc["run_info"]["command_line"], "etwh run");
  EXPECT_DOUBLE_EQ(doc["run_info"]["duration"].get<double>(), 1.5);
  ASSERT_EQ(doc["results"].size(), 5u);
  EXPECT_EQ(doc["results"][1]["id"], "b-fail");
  EXPECT_EQ(doc["results"][1]["status"], "FAIL");
  EXPECT_EQ(doc["results"][1]["rules"], nlohmann::json::array({"CB-LEVEL-MAX"}));
  EXPECT_EQ(doc["results"][1]["message"], "CB-LEVEL-MAX: expected level 3, observed 1 <&\"'>");
  EXPECT_DOUBLE_EQ(doc["results"][1]["duration"].get<double>(), 0.2);
  // The findings as data: expected and observed apart, the step, the severity.
  EXPECT_EQ(doc["results"][0]["findings"], nlohmann::json::array());
  const auto& findings = doc["results"][1]["findings"];
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0], (nlohmann::json{{"rule", "CB-LEVEL-MAX"},
                                         {"check", "Level"},
                                         {"severity", "failure"},
                                         {"text", "expected level 3, observed 1 <&\"'>"},
                                         {"expected", "3"},
                                         {"observed", "1"},
                                         {"step",
                                          {{"case", "b-fail"},
                                           {"op", "enable"},
                                           {"pointer", "/cases/1/steps/2"},
                                           {"file", "f.json"},
                                           {"index", 2}}}}));
  EXPECT_EQ(findings[1]["severity"], "warning");
  EXPECT_FALSE(findings[1].contains("step"));
  EXPECT_EQ(findings[2]["severity"], "note");
  EXPECT_EQ(findings[2]["rule"], "");
  EXPECT_EQ(doc["results"][1]["rule_verdicts"],
            (nlohmann::json{{{"rule", "CB-LEVEL-MAX"},
                             {"verdict", "FAIL"},
                             {"reason", "check Level failed at step 2 (enable)"}}}));
}

// A finding about an event a consumer got carries it decoded, as data (schemas/run.schema.json).
TEST(JsonReport, FindingCarriesTheDecodedEvent) {
  std::vector<CaseResult> results = sample();
  Finding f = failed_check("TL-SCHEMA-ITEM", "payload", "event #1: event data differs");
  f.event = DecodedEvent{"Etwh.Tl.Event", {{"n", "42"}, {"s", "hi"}}};
  results[1].findings = {f};
  const auto doc = nlohmann::json::parse(written(JsonReport(), info(), results));
  EXPECT_EQ(doc["results"][1]["findings"][0]["event"],
            (nlohmann::json{
                {"name", "Etwh.Tl.Event"},
                {"fields", {{{"name", "n"}, {"value", "42"}}, {{"name", "s"}, {"value", "hi"}}}}}));
  EXPECT_FALSE(doc["results"][0]["findings"].contains("event"));
  // Each rule's own verdict in the case (rule_verdicts_of), as data: the case names
  // CB-LEVEL-MAX, whose checks passed; the failed check is TL-SCHEMA-ITEM's.
  EXPECT_EQ(
      doc["results"][1]["rule_verdicts"],
      (nlohmann::json{
          {{"rule", "CB-LEVEL-MAX"}, {"verdict", "PASS"}, {"reason", "its checks passed"}},
          {{"rule", "TL-SCHEMA-ITEM"}, {"verdict", "FAIL"}, {"reason", "check payload failed"}}}));
  EXPECT_EQ(doc["results"][3]["rule_verdicts"][0]["verdict"], "NOT_REACHED");
  EXPECT_EQ(doc["results"][0]["rule_verdicts"][1]["verdict"], "PASS");
}

TEST(RuleVerdicts, EveryCatalogRuleGetsOneAndUncoveredOnesAreUnsupported) {
  RunInfo i = info();
  i.catalog_rules = {"TR-SET-ONCE", "GRP-ENABLE", "CB-LEVEL-MAX"};
  const auto verdicts = rule_verdicts(i, sample());
  // Catalog order first, then the other rules the cases name, sorted.
  ASSERT_EQ(verdicts.size(), 5u);
  EXPECT_EQ(verdicts[0].id, "TR-SET-ONCE");
  EXPECT_EQ(verdicts[0].status, Status::kXFail);
  EXPECT_EQ(verdicts[1].id, "GRP-ENABLE");
  EXPECT_EQ(verdicts[1].status, Status::kUnsupported);
  EXPECT_EQ(verdicts[1].cases, 0);
  EXPECT_EQ(verdicts[2].id, "CB-LEVEL-MAX");
  EXPECT_EQ(verdicts[2].status, Status::kFail);
  EXPECT_EQ(verdicts[3].id, "CB-ANY-OR");
  EXPECT_EQ(verdicts[4].id, "SES-MAX-8");

  // The console lists a rule no case judges only verbose.
  const ConsoleOptions verbose{Verbosity::kVerbose, ConsoleStyle(), 0};
  EXPECT_EQ(written<ConsoleReport>(i, sample()).find("GRP-ENABLE"), std::string::npos);
  const std::string text = written(ConsoleReport(verbose), i, sample());
  EXPECT_NE(text.find("GRP-ENABLE                     UNSUPPORTED    0 (no case)"),
            std::string::npos)
      << text;
  auto doc = nlohmann::json::parse(written<JsonReport>(i, sample()));
  ASSERT_EQ(doc["rules"].size(), 5u);
  EXPECT_EQ(
      doc["rules"][1],
      (nlohmann::json{
          {"id", "GRP-ENABLE"}, {"status", "UNSUPPORTED"}, {"cases", 0}, {"not_reached", 0}}));

  // With the catalog's reason for this platform, the reason replaces "(no case)".
  i.unsupported_reasons["GRP-ENABLE"] = "no groups here";
  const std::string text2 = written(ConsoleReport(verbose), i, sample());
  EXPECT_NE(text2.find("GRP-ENABLE                     UNSUPPORTED    0 (no groups here)"),
            std::string::npos)
      << text2;
  EXPECT_EQ(nlohmann::json::parse(written<JsonReport>(i, sample()))["rules"][1]["reason"],
            "no groups here");
}

TEST(JunitReport, ParsesBackWithCountsAndEscapedMessages) {
  std::ostringstream out;
  JunitReport().write(info(), sample(), out);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(out.str().c_str())) << out.str();
  auto suite = doc.child("testsuites").child("testsuite");
  EXPECT_EQ(suite.attribute("tests").as_int(), 5);
  EXPECT_EQ(suite.attribute("failures").as_int(), 1);
  EXPECT_EQ(suite.attribute("errors").as_int(), 1);
  // The expected UNSUPPORTED and the XFAIL.
  EXPECT_EQ(suite.attribute("skipped").as_int(), 2);
  EXPECT_EQ(doc.child("testsuites").attribute("tests").as_int(), 5);
  auto failing = suite.find_child_by_attribute("testcase", "name", "b-fail");
  ASSERT_TRUE(failing);
  EXPECT_STREQ(failing.child("failure").attribute("message").value(),
               "CB-LEVEL-MAX: expected level 3, observed 1 <&\"'>");
  // The body (what GitLab and Jenkins show): the summary, then the findings that judge
  // something, one a line; notes stay out.
  EXPECT_STREQ(failing.child("failure").text().get(),
               "CB-LEVEL-MAX: expected level 3, observed 1 <&\"'>\n\n"
               "failure CB-LEVEL-MAX: expected level 3, observed 1 <&\"'>\n"
               "warning DESC-CHANNEL: WARNING DESC-CHANNEL b-fail: ch\n");
  auto xfail = suite.find_child_by_attribute("testcase", "name", "c-xfail");
  EXPECT_FALSE(xfail.child("failure"));
  auto herr = suite.find_child_by_attribute("testcase", "name", "d-herr");
  EXPECT_STREQ(herr.child("error").text().get(), "spawn failed\n");
}

TEST(JunitReport, GroupsByScenarioFileAndShowsEveryRule) {
  RunInfo i = info();
  i.catalog_rules = {"TR-SET-ONCE", "GRP-ENABLE"};
  i.unsupported_reasons["GRP-ENABLE"] = "no groups here";
  std::vector<CaseResult> results = sample();
  results[1].file = "scenarios/conformance/callbacks.json";
  results[2].findings.push_back(expectation_note("FAIL", "FAIL", "expected FAIL: stubbed"));
  results[2].file = "scenarios/conformance/traits.json";
  std::ostringstream out;
  JunitReport().write(i, results, out);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(out.str().c_str())) << out.str();
  auto suite = doc.child("testsuites").child("testsuite");
  // The run's facts at suite level; a testcase carries none (xunit2 allows none there).
  EXPECT_STREQ(suite.child("properties")
                   .find_child_by_attribute("property", "name", "platform")
                   .attribute("value")
                   .value(),
               "etwrt");
  for (auto tc : suite.children("testcase")) EXPECT_FALSE(tc.child("properties"));
  auto failing = suite.find_child_by_attribute("testcase", "name", "b-fail");
  EXPECT_STREQ(failing.attribute("classname").value(), "scenarios.conformance.callbacks");
  EXPECT_STREQ(failing.attribute("file").value(), "scenarios/conformance/callbacks.json");
  EXPECT_STREQ(failing.child("system-out").text().get(),
               "rules: CB-LEVEL-MAX\nstatus: FAIL\nexpected: PASS\n"
               "rule CB-LEVEL-MAX: FAIL (check Level failed at step 2 (enable))\n");
  // XFAIL is skipped with the expectation's reason, as pytest writes xfail.
  auto xfail = suite.find_child_by_attribute("testcase", "name", "c-xfail");
  EXPECT_STREQ(xfail.attribute("classname").value(), "scenarios.conformance.traits");
  EXPECT_STREQ(xfail.child("skipped").attribute("type").value(), "XFAIL");
  EXPECT_STREQ(xfail.child("skipped").attribute("message").value(), "expected FAIL: stubbed");
  EXPECT_STREQ(xfail.child("system-out").text().get(),
               "rules: TR-SET-ONCE\nstatus: XFAIL\nexpected: FAIL\n"
               "rule TR-SET-ONCE: XFAIL (check status failed)\n");
  // A case with no file keeps a classname per platform.
  EXPECT_STREQ(
      suite.find_child_by_attribute("testcase", "name", "a-pass").attribute("classname").value(),
      "etwh.etwrt");
  // The rule with no case: a skipped testcase with the catalog's reason.
  auto uncovered = suite.find_child_by_attribute("testcase", "name", "GRP-ENABLE");
  ASSERT_TRUE(uncovered);
  EXPECT_STREQ(uncovered.attribute("classname").value(), "rules");
  EXPECT_STREQ(uncovered.child("skipped").attribute("message").value(), "no groups here");
  EXPECT_FALSE(suite.find_child_by_attribute("testcase", "name", "TR-SET-ONCE"));
  EXPECT_EQ(suite.attribute("tests").as_int(), 6);
  EXPECT_EQ(suite.attribute("skipped").as_int(), 3);
}

TEST(JsonReport, ResultsCarryFileAndExpected) {
  std::vector<CaseResult> results = sample();
  results[1].file = "scenarios/conformance/callbacks.json";
  results[2].findings = {expectation_note("FAIL", "", "expected FAIL: stubbed")};
  auto doc = nlohmann::json::parse(written(JsonReport(), info(), results));
  EXPECT_EQ(doc["results"][1]["file"], "scenarios/conformance/callbacks.json");
  EXPECT_EQ(doc["results"][1]["expected"], "PASS");
  EXPECT_EQ(doc["results"][2]["expected"], "FAIL");
  EXPECT_EQ(doc["results"][0]["file"], "");
}

TEST(Reports, RepeatedCasesShowEveryRepetitionAndFlakyOnesFailInJunit) {
  CaseResult steady{"a-steady", {"CB-LEVEL-MAX"}, Status::kPass, true, "", 0.1, "", {}};
  steady.repetitions = {Status::kPass, Status::kPass};
  CaseResult flaky{"b-flaky", {"CB-LEVEL-MAX"}, Status::kPass, true, "", 0.1, "", {}};
  flaky.repetitions = {Status::kPass, Status::kFail, Status::kPass};
  const std::vector<CaseResult> results = {steady, flaky};

  const auto doc = nlohmann::json::parse(written(JsonReport(), info(), results));
  EXPECT_EQ(doc["results"][0]["repetitions"], nlohmann::json({"PASS", "PASS"}));
  EXPECT_EQ(doc["results"][0]["flaky"], false);
  EXPECT_EQ(doc["results"][1]["repetitions"], nlohmann::json({"PASS", "FAIL", "PASS"}));
  EXPECT_EQ(doc["results"][1]["flaky"], true);

  std::ostringstream xml_out;
  JunitReport().write(info(), results, xml_out);
  pugi::xml_document xml;
  ASSERT_TRUE(xml.load_string(xml_out.str().c_str()));
  const auto suite = xml.child("testsuites").child("testsuite");
  EXPECT_EQ(suite.attribute("failures").as_int(), 1);
  const auto failure =
      suite.find_child_by_attribute("testcase", "name", "b-flaky").child("failure");
  EXPECT_STREQ(failure.attribute("type").value(), "FLAKY");
  EXPECT_STREQ(failure.attribute("message").value(), "flaky across repetitions: PASS, FAIL, PASS");
  EXPECT_FALSE(suite.find_child_by_attribute("testcase", "name", "a-steady").child("failure"));
}

}  // namespace
}  // namespace etwh

namespace etwh {
namespace {

// Scenario files are named from the scenarios folder, whatever the working folder: an installed
// etwh (absolute paths) gives the same classnames as a run from the clone.
TEST(JunitReport, ClassnameAndFileRelativeToTheScenariosFolder) {
  const RunInfo i = info();
  const std::string scenarios = "/opt/etwh/share/etwh/scenarios/conformance";
  std::vector<CaseResult> results = sample();
  results[0].file = "/opt/etwh/share/etwh/scenarios/conformance/callbacks.json";
  results[1].file = "/opt/etwh/share/etwh/scenarios/conformance/more/traits.json";
  results[2].file = "/home/me/mine.json";  // outside the folder and the working folder
  pugi::xml_document doc;
  const std::string xml = written(JunitReport(scenarios), i, results);
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto suite = doc.child("testsuites").child("testsuite");
  auto attr = [&](const char* name, const char* attribute) {
    return std::string(
        suite.find_child_by_attribute("testcase", "name", name).attribute(attribute).value());
  };
  EXPECT_EQ(attr("a-pass", "classname"), "callbacks");
  EXPECT_EQ(attr("a-pass", "file"), "callbacks.json");
  EXPECT_EQ(attr("b-fail", "classname"), "more.traits");
  EXPECT_EQ(attr("b-fail", "file"), "more/traits.json");
  EXPECT_EQ(attr("c-xfail", "classname"), "mine");  // never the absolute path in dots
  EXPECT_EQ(attr("c-xfail", "file"), "/home/me/mine.json");
  EXPECT_EQ(scenario_path("/opt/etwh/share/etwh/scenarios/conformance/../x.json", scenarios)[0],
            '/');  // outside once normalised
}

TEST(MarkdownReport, FailuresFirstThenCountsShortCells) {
  RunInfo i = info();
  i.catalog_rules = {"CB-LEVEL-MAX", "CB-ANY-OR", "TR-SET-ONCE", "SES-MAX-8", "GRP-ENABLE"};
  std::vector<CaseResult> results = sample();
  results[1].message = std::string(300, 'x') + " | a pipe\nand a line";
  const std::string md = written<MarkdownReport>(i, results);
  EXPECT_EQ(md.rfind("### etwh run on etwrt: 2 of 5 cases not as expected\n", 0), 0u) << md;
  const auto failures = md.find("| `b-fail` | **FAIL** | PASS | CB-LEVEL-MAX |");
  const auto herr = md.find("| `d-herr` | **HARNESS_ERROR** | PASS | CB-ANY-OR |");
  const auto counts = md.find("| status | cases |");
  ASSERT_NE(failures, std::string::npos) << md;
  ASSERT_NE(herr, std::string::npos) << md;
  EXPECT_LT(herr, counts);
  EXPECT_EQ(md.find("a pipe"), std::string::npos);  // cut at 200 characters
  EXPECT_NE(md.find("| PASS | 1 |"), std::string::npos) << md;
  // Judged rules not PASS (CB-ANY-OR: the harness error did not reach its checks, the passing
  // case judged it); a rule no case names (GRP-ENABLE) is not listed.
  EXPECT_NE(md.find("4 rules judged; not PASS (3): "), std::string::npos) << md;
  EXPECT_EQ(md.find("not reached"), std::string::npos) << md;
  // A rule whose every case stopped before its checks is not reached, not judged.
  const std::string stopped = written<MarkdownReport>(i, {results[3]});
  EXPECT_NE(stopped.find("0 rules judged; not reached (1): `CB-ANY-OR`."), std::string::npos)
      << stopped;
  EXPECT_EQ(md.find("GRP-ENABLE"), std::string::npos);
  // A clean run says so in its title, with no table of failures.
  const std::string clean = written<MarkdownReport>(i, {results[0], results[2]});
  EXPECT_EQ(clean.rfind("### etwh run on etwrt: all 2 cases as expected\n", 0), 0u) << clean;
  EXPECT_EQ(clean.find("| case |"), std::string::npos);
}

}  // namespace
}  // namespace etwh
