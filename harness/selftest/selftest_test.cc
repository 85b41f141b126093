// Unit tests of `etwh selftest`'s pure parts: the mutant registry loader, argument expansion,
// report summaries and the kill judgement. The registry shipped in mutants/ must load.
#include "harness/selftest/selftest.h"
#include "tests/lib/thrown.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace etwh::selftest {
namespace {

using nlohmann::json;

const std::set<std::string> kRules = {"CB-LEVEL-MAX", "FLT-LEVEL", "PROV-EVENT-ENABLED"};

std::string error_of(const std::string& text) {
  return test_support::thrown<InputError>([&] { load_mutants_text(text, "m.json", kRules); }, "");
}

TEST(SelftestRegistry, LoadsBothKinds) {
  const auto m = load_mutants_text(R"({"schema_version": 1, "mutants": [
      {"name": "level-min", "kind": "runtime", "description": "d", "expect_rules": ["CB-LEVEL-MAX"]},
      {"name": "p-lt", "kind": "provider", "description": "d",
       "expect_rules": ["PROV-EVENT-ENABLED"], "etwh_args": ["--subject", "${bin}/x"],
       "scenarios": ["provider.json"]}]})",
                                   "m.json", kRules);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].kind, MutantKind::kRuntime);
  EXPECT_EQ(m[1].kind, MutantKind::kProvider);
  EXPECT_EQ(m[1].etwh_args.size(), 2u);
  EXPECT_EQ(m[1].scenarios, std::vector<std::string>{"provider.json"});
}

TEST(SelftestRegistry, ObserveMutantsNeedTheCorrectProgram) {
  const std::string observe = R"({"name": "o", "kind": "observe", "description": "d",
       "expect_rules": ["PROV-EVENT-ENABLED"], "etwh_args": ["--", "${mutants}/bin/x", "6000"]})";
  const Registry r = load_registry_text(R"({"schema_version": 1, "mutants": [)" + observe +
                                            R"(], "observe_clean": ["--", "${bin}/y"]})",
                                        "m.json", kRules);
  ASSERT_EQ(r.mutants.size(), 1u);
  EXPECT_EQ(r.mutants[0].kind, MutantKind::kObserve);
  EXPECT_EQ(r.observe_clean, (std::vector<std::string>{"--", "${bin}/y"}));
  EXPECT_NE(error_of(R"({"schema_version": 1, "mutants": [)" + observe + "]}")
                .find("/observe_clean: required with an observe mutant"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "mutants": [{"name": "o", "kind": "observe",
      "description": "d", "expect_rules": ["FLT-LEVEL"], "etwh_args": ["--", "x"],
      "scenarios": ["a.json"]}], "observe_clean": ["--", "y"]})")
                .find("/mutants/0/scenarios: an observe mutant runs no scenario"),
            std::string::npos);
}

TEST(SelftestRegistry, RejectsBadEntriesPrecisely) {
  // Each registry text, and what its error names.
  const std::pair<std::string, std::string> bad[] = {
      {R"({"schema_version": 1, "mutants": [{"name": "a", "kind": "runtime",
      "description": "d", "expect_rules": ["NOPE"]}]})",
       "/mutants/0/expect_rules/0: unknown rule \"NOPE\""},
      {R"({"schema_version": 1, "mutants": [
      {"name": "a", "kind": "runtime", "description": "d", "expect_rules": ["FLT-LEVEL"]},
      {"name": "a", "kind": "runtime", "description": "d", "expect_rules": ["FLT-LEVEL"]}]})",
       "/mutants/1/name: duplicate"},
      {R"({"schema_version": 1, "mutants": [{"name": "a", "kind": "provider",
      "description": "d", "expect_rules": ["FLT-LEVEL"]}]})",
       "/mutants/0/etwh_args: missing"},
      {R"({"schema_version": 1, "mutants": [{"name": "A_b", "kind": "runtime",
      "description": "d", "expect_rules": ["FLT-LEVEL"]}]})",
       "/mutants/0/name"},
      {R"({"schema_version": 1, "mutants": [{"name": "a", "kind": "kernel",
      "description": "d", "expect_rules": ["FLT-LEVEL"]}]})",
       "unknown kind"},
      {R"({"schema_version": 1, "mutants": [{"name": "a", "kind": "runtime",
      "description": "d", "expect_rules": []}]})",
       "must not be empty"},
      {R"({"schema_version": 1, "mutants": [{"name": "a", "kind": "runtime",
      "description": "d", "expect_rules": ["FLT-LEVEL"], "typo": 1}]})",
       "/mutants/0/typo: unknown field"},
  };
  for (const auto& [text, names] : bad) {
    EXPECT_NE(error_of(text).find(names), std::string::npos) << error_of(text);
  }
  EXPECT_EQ(error_of("{").rfind("m.json:1:2: JSON syntax error: ", 0), 0u) << error_of("{");
}

TEST(SelftestRegistry, ShippedRegistryLoads) {
  std::set<std::string> rules;
  std::ifstream in(ETWH_CATALOG_FILE);
  const json catalog = json::parse(in);
  for (const json& r : catalog["rules"]) rules.insert(r["id"].get<std::string>());
  const auto mutants = load_mutants(ETWH_MUTANTS_FILE, rules);
  std::size_t runtime = 0;
  for (const Mutant& m : mutants) runtime += m.kind == MutantKind::kRuntime;
  EXPECT_GE(runtime, 10u);
}

TEST(SelftestArgs, ExpandsBinDataAndMutants) {
  EXPECT_EQ(expand_args({"--subject", "${bin}/p", "${data}/x${bin}", "${mutants}/bin/q"}, "/b",
                        "/d", "/m"),
            (std::vector<std::string>{"--subject", "/b/p", "/d/x/b", "/m/bin/q"}));
}

json report_with(std::vector<json> results) {
  json report = {{"schema_version", 1}};
  report["results"] = json(std::move(results));
  return report;
}

json failed_finding(const char* rule, const char* severity = "failure") {
  return json{{"rule", rule}, {"check", "Level"}, {"severity", severity}, {"text", "level"}};
}

TEST(SelftestJudge, KilledOnlyByAFailedCheckOfAnExpectedRule) {
  const Mutant m{"level-min", MutantKind::kRuntime, "d", {"CB-LEVEL-MAX"}, {}, {}};
  const RunSummary caught = summarize_report(report_with(
      {{{"id", "a"},
        {"rules", {"CB-LEVEL-MAX", "CB-RECOMPUTE"}},
        {"status", "FAIL"},
        {"as_expected", false},
        {"message", "Level 1, expected 3"},
        {"findings", {failed_finding("CB-LEVEL-MAX"), failed_finding("CB-RECOMPUTE")}}},
       {{"id", "b"}, {"rules", {"FLT-LEVEL"}}, {"status", "PASS"}, {"as_expected", true}}}));
  ASSERT_TRUE(caught.report_read);
  EXPECT_EQ(caught.cases, 2);
  const Verdict v = judge(m, caught);
  EXPECT_TRUE(v.killed);
  ASSERT_TRUE(v.caught.count("CB-RECOMPUTE"));
  EXPECT_EQ(v.caught.at("CB-LEVEL-MAX").message, "Level 1, expected 3");
  // The evidence: the expected rule's failed finding, with its case; not the other rule's.
  ASSERT_EQ(v.killed_by.size(), 1u);
  EXPECT_EQ(v.killed_by[0]["rule"], "CB-LEVEL-MAX");
  EXPECT_EQ(v.killed_by[0]["check"], "Level");
  EXPECT_EQ(v.killed_by[0]["case"], "a");

  const RunSummary elsewhere = summarize_report(report_with(
      {{{"id", "b"}, {"rules", {"FLT-LEVEL"}}, {"status", "FAIL"}, {"as_expected", false}}}));
  EXPECT_FALSE(judge(m, elsewhere).killed);

  // Another rule's case with a failed check blamed on the expected rule kills it; a warning
  // or a note on it does not, and neither does a message that only names it.
  const RunSummary blamed =
      summarize_report(report_with({{{"id", "c"},
                                     {"rules", {"PROV-RECORD"}},
                                     {"status", "FAIL"},
                                     {"as_expected", false},
                                     {"message", "lint: FAILURE CB-LEVEL-MAX c provider p: level"},
                                     {"findings", {failed_finding("CB-LEVEL-MAX")}}}}));
  EXPECT_TRUE(judge(m, blamed).killed);
  const RunSummary warned = summarize_report(
      report_with({{{"id", "c"},
                    {"rules", {"PROV-RECORD"}},
                    {"status", "FAIL"},
                    {"as_expected", false},
                    {"message", "CB-LEVEL-MAX: no"},
                    {"findings",
                     {failed_finding("CB-LEVEL-MAX", "warning"),
                      failed_finding("CB-LEVEL-MAX", "note"), failed_finding("PROV-RECORD")}}}}));
  EXPECT_FALSE(judge(m, warned).killed);
}

// A failing case that names the expected rule, failed by another rule's check, is no kill, for
// a runtime mutant as for the others: the evidence is the failed check, not the case.
TEST(SelftestJudge, ACaseThatOnlyNamesTheRuleIsNoKill) {
  const Mutant m{"level-lt", MutantKind::kRuntime, "d", {"FLT-LEVEL"}, {}, {}};
  const RunSummary run =
      summarize_report(report_with({{{"id", "flt-level-basic"},
                                     {"rules", {"FLT-LEVEL", "CON-ORDER"}},
                                     {"status", "FAIL"},
                                     {"as_expected", false},
                                     {"message", "CON-ORDER: out of order"},
                                     {"findings", {failed_finding("CON-ORDER")}}}}));
  const Verdict v = judge(m, run);
  EXPECT_FALSE(v.killed);
  EXPECT_TRUE(v.killed_by.empty());
  EXPECT_TRUE(v.caught.count("CON-ORDER"));
  EXPECT_FALSE(v.caught.count("FLT-LEVEL"));
}

// `etwh observe`'s provider case names every rule it judged: an observe mutant is killed only
// by a failed check blamed on its rule, never by a failing case that merely names it.
TEST(SelftestJudge, ObserveMutantKilledOnlyByAFindingOnItsRule) {
  const Mutant m{"o", MutantKind::kObserve, "d", {"PROV-RECORD"}, {}, {}};
  const auto failing = [](const char* blamed) {
    return summarize_report(report_with(
        {{{"id", "observe/g"},
          {"rules", {"PROV-RECORD", "DESC-CHANNEL"}},
          {"status", "FAIL"},
          {"as_expected", false},
          {"message", "PROV-RECORD: writes after its DISABLE callback"},
          {"findings",
           {{{"rule", blamed}, {"check", "x"}, {"severity", "failure"}, {"text", "t"}}}}}}));
  };
  EXPECT_FALSE(judge(m, failing("DESC-CHANNEL")).killed);
  EXPECT_TRUE(judge(m, failing("PROV-RECORD")).killed);
}

TEST(SelftestJudge, HarnessErrorsAndExpectedFailuresAreNoKill) {
  const Mutant m{"x", MutantKind::kRuntime, "d", {"FLT-LEVEL"}, {}, {}};
  const RunSummary s = summarize_report(report_with(
      {{{"id", "a"}, {"rules", {"FLT-LEVEL"}}, {"status", "HARNESS_ERROR"}, {"as_expected", false}},
       {{"id", "b"}, {"rules", {"FLT-LEVEL"}}, {"status", "XFAIL"}, {"as_expected", true}}}));
  ASSERT_TRUE(s.report_read);
  EXPECT_EQ(s.harness_errors.size(), 1u);
  EXPECT_FALSE(judge(m, s).killed);
}

TEST(SelftestJudge, MalformedReportIsNoRun) {
  EXPECT_FALSE(summarize_report(json::object()).report_read);
  EXPECT_FALSE(summarize_report(report_with({{{"id", "a"}}})).report_read);
}

TEST(SelftestMatrix, MarksExpectedCaughtAndSurvivors) {
  const std::vector<Mutant> mutants = {
      {"m1", MutantKind::kRuntime, "d1", {"FLT-LEVEL"}, {}, {}},
      {"m2", MutantKind::kRuntime, "d2", {"CB-LEVEL-MAX"}, {}, {}}};
  RunSummary r1 = summarize_report(report_with({{{"id", "c"},
                                                 {"rules", {"FLT-LEVEL"}},
                                                 {"status", "FAIL"},
                                                 {"as_expected", false},
                                                 {"message", "got 2 events"},
                                                 {"findings", {failed_finding("FLT-LEVEL")}}}}));
  RunSummary r2 = summarize_report(report_with({}));
  const std::vector<RunSummary> runs = {r1, r2};
  const std::vector<Verdict> verdicts = {judge(mutants[0], r1), judge(mutants[1], r2)};
  std::ostringstream out;
  print_matrix(mutants, runs, verdicts, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("KILLED"), std::string::npos);
  EXPECT_NE(text.find("SURVIVED"), std::string::npos);
  EXPECT_NE(text.find("caught by FLT-LEVEL in c (FAIL): got 2 events"), std::string::npos);
}

}  // namespace
}  // namespace etwh::selftest
