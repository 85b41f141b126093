#include "console_report.h"
#include "progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace etwh {
namespace {

Finding finding(Severity severity, std::string rule, std::string text) {
  Finding f = failed_check(std::move(rule), kCheckLint, std::move(text));
  f.severity = severity;
  return f;
}

CaseResult passing() {
  CaseResult r{"a-pass", {"CB-LEVEL-MAX"}, Status::kPass, true, "", 0.1, "", {}};
  r.findings = {finding(Severity::kWarning, "DESC-CHANNEL", "channel 9 is unusual"),
                finding(Severity::kNote, "", "Level 3 seen")};
  return r;
}

CaseResult failing() {
  return {"b-fail", {"CB-LEVEL-MAX"}, Status::kFail, false, "CB-LEVEL-MAX: expected 3", 0.25, "",
          {}};
}

// A PASS the expectations did not foresee (they say TIMEOUT): not as expected, status PASS.
CaseResult unforeseen_pass() {
  return {"c-pass", {"CB-ANY-OR"}, Status::kPass, false, "expected TIMEOUT: slow", 0, "", {}};
}

std::string progress(Verbosity verbosity, bool color = false, int repetition = 0) {
  std::ostringstream out;
  ProgressPrinter printer(out, 12, verbosity, ConsoleStyle(color));
  printer.finished(passing(), repetition);
  printer.finished(failing(), repetition);
  return out.str();
}

TEST(ProgressPrinter, OneLinePerCaseWithCounterStatusIdAndTime) {
  const std::string text = progress(Verbosity::kNormal);
  EXPECT_NE(text.find("[ 1/12] PASS  a-pass (0.10 s)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[ 2/12] FAIL  b-fail (0.25 s): CB-LEVEL-MAX: expected 3\n"),
            std::string::npos)
      << text;
}

TEST(ProgressPrinter, NormalShowsWarningsOfPassingCasesButNotNotes) {
  const std::string text = progress(Verbosity::kNormal);
  EXPECT_NE(text.find("    warning DESC-CHANNEL: channel 9 is unusual\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("Level 3 seen"), std::string::npos) << text;
}

TEST(ProgressPrinter, QuietPrintsOnlyCasesNotAsExpectedButCountsAll) {
  const std::string text = progress(Verbosity::kQuiet);
  EXPECT_EQ(text.find("a-pass"), std::string::npos) << text;
  EXPECT_EQ(text.find("warning"), std::string::npos) << text;
  EXPECT_NE(text.find("[ 2/12] FAIL  b-fail"), std::string::npos) << text;
}

TEST(ProgressPrinter, VerboseShowsEveryFindingOfPassingCases) {
  const std::string text = progress(Verbosity::kVerbose);
  EXPECT_NE(text.find("    note Level 3 seen\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    warning DESC-CHANNEL"), std::string::npos) << text;
}

TEST(ProgressPrinter, RepetitionFollowsTheId) {
  EXPECT_NE(progress(Verbosity::kNormal, false, 2).find("PASS  a-pass #2 (0.10 s)"),
            std::string::npos);
}

TEST(ProgressPrinter, ColourOnlyWhenAsked) {
  EXPECT_EQ(progress(Verbosity::kNormal, false).find('\x1b'), std::string::npos);
  const std::string colored = progress(Verbosity::kNormal, true);
  EXPECT_NE(colored.find("\x1b[32mPASS \x1b[0m a-pass"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[31mFAIL \x1b[0m b-fail"), std::string::npos) << colored;
}

RunInfo info() {
  RunInfo i;
  i.platform = "etwrt";
  i.duration_s = 2;
  i.catalog_rules = {"CB-LEVEL-MAX", "CB-ANY-OR"};
  return i;
}

std::string summary(std::vector<CaseResult> results, ConsoleOptions options = {}) {
  std::ostringstream out;
  ConsoleReport(options).write(info(), results, out);
  return out.str();
}

TEST(ConsoleReport, NamesEveryCaseNotAsExpectedWithItsReason) {
  const std::string text = summary({passing(), failing(), unforeseen_pass()});
  const auto section = text.find("Not as expected (2):\n");
  ASSERT_NE(section, std::string::npos) << text;
  EXPECT_NE(text.find("FAIL b-fail: CB-LEVEL-MAX: expected 3\n", section), std::string::npos);
  EXPECT_NE(text.find("PASS c-pass: expected TIMEOUT: slow\n", section), std::string::npos);
  EXPECT_NE(text.find("3 cases, 2 not as expected, platform etwrt"), std::string::npos);
}

TEST(ConsoleReport, ShowsWarningsOfPassingCases) {
  const std::string text = summary({passing()});
  EXPECT_NE(text.find("PASS a-pass (warnings): "), std::string::npos) << text;
  EXPECT_EQ(text.find("Not as expected"), std::string::npos) << text;
}

TEST(ConsoleReport, QuietLeavesOutTheTableAndTheExpectedCases) {
  const std::string text = summary({passing(), failing()}, {Verbosity::kQuiet, ConsoleStyle()});
  EXPECT_EQ(text.find("RULE"), std::string::npos) << text;
  EXPECT_EQ(text.find("a-pass"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL b-fail: "), std::string::npos) << text;
}

TEST(ConsoleReport, NamesFlakyCasesWithTheirStatuses) {
  CaseResult flaky = failing();
  flaky.repetitions = {Status::kPass, Status::kFail, Status::kPass};
  CaseResult steady = passing();
  steady.repetitions = {Status::kPass, Status::kPass, Status::kPass};
  EXPECT_TRUE(flaky.flaky());
  EXPECT_FALSE(steady.flaky());
  const std::string text = summary({steady, flaky});
  EXPECT_NE(text.find("Flaky (1):\n  b-fail: PASS, FAIL, PASS\n"), std::string::npos) << text;
  EXPECT_NE(text.find("2 cases, 1 not as expected, 1 flaky, platform"), std::string::npos);
}

TEST(ConsoleReport, ColourOnlyWhenAsked) {
  EXPECT_EQ(summary({passing(), failing()}).find('\x1b'), std::string::npos);
  const std::string colored =
      summary({passing(), failing()}, {Verbosity::kNormal, ConsoleStyle(true)});
  EXPECT_NE(colored.find("\x1b[31mFAIL\x1b[0m b-fail"), std::string::npos) << colored;
}

}  // namespace
}  // namespace etwh
