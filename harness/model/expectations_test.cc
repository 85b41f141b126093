#include "harness/model/expectations.h"
#include "tests/lib/thrown.h"
#include "harness/model/expectations_update.h"
#include "etwh/output_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <random>

namespace etwh {
namespace {

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("etwh_exp_" + std::to_string(std::random_device{}()) + "_" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(Classify, NoEntryMeansPass) {
  const Expectations none;
  EXPECT_EQ(classify(Status::kPass, none, "c"), std::make_pair(Status::kPass, true));
  EXPECT_EQ(classify(Status::kFail, none, "c"), std::make_pair(Status::kFail, false));
  EXPECT_EQ(classify(Status::kCrash, none, "c"), std::make_pair(Status::kCrash, false));
}

TEST(Classify, ExpectedFailBecomesXfailOrXpass) {
  const Expectations e = {{"c", Expectation{Status::kFail, "why"}}};
  EXPECT_EQ(classify(Status::kFail, e, "c"), std::make_pair(Status::kXFail, true));
  EXPECT_EQ(classify(Status::kPass, e, "c"), std::make_pair(Status::kXPass, false));
  EXPECT_EQ(classify(Status::kTimeout, e, "c"), std::make_pair(Status::kTimeout, false));
}

TEST(Classify, OtherExpectedStatusesMatchExactly) {
  const Expectations e = {{"c", Expectation{Status::kUnsupported, "n/a"}}};
  EXPECT_EQ(classify(Status::kUnsupported, e, "c"), std::make_pair(Status::kUnsupported, true));
  EXPECT_EQ(classify(Status::kPass, e, "c"), std::make_pair(Status::kPass, false));
}

TEST(LoadExpectations, ParsesAndRejects) {
  auto ok = write_temp("ok.json", R"({"c": {"status": "FAIL", "reason": "stub"}})");
  auto e = load_expectations(ok, {"c"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e["c"].status, Status::kFail);
  EXPECT_EQ(e["c"].reason, "stub");
  auto bad = write_temp("bad.json", R"({"c": {"status": "XPASS", "reason": "r"}})");
  try {
    load_expectations(bad, {"c"});
    FAIL() << "no error";
  } catch (const InputError& ex) {
    EXPECT_EQ(std::string(ex.what()),
              bad.string() +
                  ":1:18: /c/status: status \"XPASS\" is not one of PASS, FAIL, "
                  "UNSUPPORTED, TIMEOUT, CRASH, HARNESS_ERROR");
  }
  try {
    load_expectations(ok, {"other"});
    FAIL() << "no error";
  } catch (const InputError& ex) {
    EXPECT_EQ(std::string(ex.what()), ok.string() + ":1:7: /c: unknown case id \"c\"");
  }
  std::filesystem::remove(ok);
  std::filesystem::remove(bad);
}

std::string error_of(const std::function<void()>& load) {
  return test_support::thrown<InputError>(load);
}

constexpr char kCurrent[] = R"({
  "schema_version": 2,
  "reasons": {"stub": "the platform stubs it", "unused": "nobody"},
  "files": {"classic.json": {"status": "FAIL", "reason_ref": "stub"}},
  "cases": {
    "a": {"status": "FAIL", "reason_ref": "stub"},
    "b": {"status": "TIMEOUT", "reason": "slow"},
    "c2": {"status": "PASS", "reason": "passes unlike its file"}
  }
})";

CaseFile case_in(const std::string& id, const std::string& file) { return {id, file}; }

TEST(LoadExpectations, ReasonsByNameAndDefaultsPerFile) {
  auto file = write_temp("current.json", kCurrent);
  const std::vector<CaseFile> cases = {
      case_in("a", "x/callbacks.json"), case_in("c1", "scenarios/conformance/classic.json"),
      case_in("c2", "scenarios/conformance/classic.json"), case_in("d", "x/callbacks.json")};
  const Expectations e = load_expectations(file, {}, cases);
  EXPECT_EQ(e.at("a").status, Status::kFail);
  EXPECT_EQ(e.at("a").reason, "the platform stubs it");
  EXPECT_EQ(e.at("b").reason, "slow");
  // c1 takes its file's default, c2's own entry wins over it, d has none (PASS).
  EXPECT_EQ(e.at("c1").status, Status::kFail);
  EXPECT_EQ(e.at("c1").reason, "the platform stubs it");
  EXPECT_EQ(e.at("c2").status, Status::kPass);
  EXPECT_FALSE(e.count("d"));
  EXPECT_EQ(classify(Status::kFail, e, "c1"), std::make_pair(Status::kXFail, true));
  // With every case of the run known, a default for a file outside it is an error.
  EXPECT_EQ(error_of([&] {
              load_expectations(file, {"a", "b", "c2"}, {cases[0]});
            }),
            file.string() +
                ":4:29: /files/classic.json: no scenario file \"classic.json\" "
                "among the run's");
  std::filesystem::remove(file);
}

TEST(LoadExpectations, CurrentFormatErrorsArePrecise) {
  auto bad_ref = write_temp("ref.json", R"({"schema_version": 2, "reasons": {},
 "cases": {"a": {"status": "FAIL", "reason_ref": "nope"}}})");
  EXPECT_EQ(error_of([&] { load_expectations(bad_ref, {}); }),
            bad_ref.string() + ":2:50: /cases/a/reason_ref: no reason \"nope\" in /reasons");
  auto both = write_temp("both.json", R"({"schema_version": 2, "reasons": {"r": "x"},
 "cases": {"a": {"status": "FAIL", "reason": "y", "reason_ref": "r"}}})");
  EXPECT_EQ(error_of([&] { load_expectations(both, {}); }),
            both.string() +
                ":2:65: /cases/a/reason_ref: give \"reason\" or \"reason_ref\", "
                "not both");
  auto unknown = write_temp("unknown.json", R"({"schema_version": 2, "case": {}})");
  EXPECT_EQ(error_of([&] { load_expectations(unknown, {}); }),
            unknown.string() + ":1:31: /case: unknown field \"case\"");
  auto no_case = write_temp("nocase.json", R"({"schema_version": 2,
 "cases": {"zz": {"status": "FAIL", "reason": "r"}}})");
  EXPECT_EQ(error_of([&] { load_expectations(no_case, {"a"}); }),
            no_case.string() + ":2:18: /cases/zz: unknown case id \"zz\"");
  // The first format has no reason_ref.
  auto old_ref = write_temp("oldref.json", R"({"a": {"status": "FAIL", "reason_ref": "r"}})");
  EXPECT_EQ(error_of([&] { load_expectations(old_ref, {}); }),
            old_ref.string() + ":1:40: /a/reason_ref: unknown field \"reason_ref\"");
  for (const auto& f : {bad_ref, both, unknown, no_case, old_ref}) std::filesystem::remove(f);
}

TEST(ExpectationsText, SortedStableAndWithoutUnusedReasons) {
  auto file = write_temp("text.json", kCurrent);
  const ExpectationsFile f = load_expectations_file(file);
  const std::string text = expectations_text(f);
  EXPECT_EQ(text.find("unused"), std::string::npos);
  EXPECT_LT(text.find("\"reasons\""), text.find("\"files\""));
  EXPECT_LT(text.find("\"files\""), text.find("\"cases\""));
  EXPECT_LT(text.find("\"a\""), text.find("\"b\""));
  // Written, read back and written again: the same bytes.
  auto again = write_temp("again.json", text);
  EXPECT_EQ(expectations_text(load_expectations_file(again)), text);
  // The first format is read and written in the current one.
  auto old = write_temp("old.json", R"({"z": {"status": "FAIL", "reason": "r"}})");
  EXPECT_EQ(expectations_text(load_expectations_file(old)),
            "{\n  \"schema_version\": 2,\n  \"reasons\": {},\n  \"files\": {},\n  \"cases\": {\n"
            "    \"z\": {\n      \"reason\": \"r\",\n      \"status\": \"FAIL\"\n    }\n  }\n}\n");
  for (const auto& p : {file, again, old}) std::filesystem::remove(p);
}

TEST(UpdateExpectations, KeepsReasonsAddsPlaceholdersDropsPasses) {
  auto path = write_temp("update.json", kCurrent);
  ExpectationsFile f = load_expectations_file(path);
  const std::vector<ReportedCase> run = {
      {"a", "callbacks.json", Status::kPass},          // stale FAIL: dropped
      {"b", "callbacks.json", Status::kCrash},         // other status: reason kept
      {"c1", "classic.json", Status::kFail},           // as its file's default: nothing
      {"c2", "classic.json", Status::kFail},           // now as the default: own entry goes
      {"c3", "classic.json", Status::kPass},           // passes against the default: PASS entry
      {"n", "callbacks.json", Status::kFail},          // new: placeholder
      {"h", "callbacks.json", Status::kHarnessError},  // never recorded
  };
  const UpdateSummary s = update_expectations(f, run);
  EXPECT_EQ(s.added, (std::vector<std::string>{"c3", "n"}));
  EXPECT_EQ(s.changed, (std::vector<std::string>{"b"}));
  EXPECT_EQ(s.removed, (std::vector<std::string>{"a", "c2"}));
  EXPECT_EQ(s.ignored, (std::vector<std::string>{"h"}));
  EXPECT_EQ(f.cases.at("b").status, Status::kCrash);
  EXPECT_EQ(f.cases.at("b").reason, "slow");
  EXPECT_TRUE(reason_is_placeholder(f.cases.at("n").reason));
  EXPECT_EQ(f.cases.at("c3").status, Status::kPass);
  EXPECT_FALSE(reason_is_placeholder(f.cases.at("c3").reason));
  EXPECT_FALSE(f.cases.count("h"));
  // A second update from the same run changes nothing.
  const ExpectationsFile once = f;
  const UpdateSummary again = update_expectations(f, run);
  EXPECT_TRUE(again.added.empty() && again.changed.empty() && again.removed.empty());
  EXPECT_EQ(expectations_text(f), expectations_text(once));
  etwh::OutputFile(path.string()).write(expectations_text(f));
  EXPECT_EQ(expectations_text(load_expectations_file(path)), expectations_text(f));
  std::filesystem::remove(path);
}

TEST(LoadRunReport, ReadsOutcomesAndChecksThePlatform) {
  auto report = write_temp("report.json", R"({"schema_version": 2,
 "run_info": {"platform": "wine"},
 "results": [{"id": "a", "status": "XFAIL", "file": "s/x.json"}, {"id": "b", "status": "XPASS"}]})");
  const auto cases = load_run_report(report, "wine");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].outcome, Status::kFail);
  EXPECT_EQ(cases[0].file, "s/x.json");
  EXPECT_EQ(cases[1].outcome, Status::kPass);
  EXPECT_EQ(error_of([&] { load_run_report(report, "etwrt"); }),
            report.string() + ":2:27: /run_info/platform: a run on wine, not on --platform etwrt");
  auto bad = write_temp("bad_report.json", R"({"schema_version": 2,
 "run_info": {"platform": "wine"}, "results": [{"id": "a", "status": "MAYBE"}]})");
  EXPECT_EQ(error_of([&] { load_run_report(bad, "wine"); }),
            bad.string() + ":2:70: /results/0/status: unknown status \"MAYBE\"");
  std::filesystem::remove(report);
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace etwh
