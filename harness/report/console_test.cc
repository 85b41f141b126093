// The console as people read it: one line per case, each failed check once under its case as a
// compiler prints a diagnostic (FILE:LINE:COL: error: text [RULE]), warnings grouped over the
// run with their cases, notes only verbose, the table of the rules judged, lines cut to width.
#include "harness/report/console_lines.h"
#include "harness/report/console_report.h"
#include "harness/report/progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace etwh {
namespace {

Finding finding(Severity severity, std::string rule, std::string text) {
  Finding f = failed_check(std::move(rule), kCheckLint, std::move(text));
  f.severity = severity;
  return f;
}

Finding located(Finding f, const char* file, std::size_t line, std::size_t col) {
  f.step.file = file;
  f.step.line = line;
  f.step.col = col;
  return f;
}

CaseResult passing(const char* id = "a-pass") {
  CaseResult r{id, {"CB-LEVEL-MAX"}, Status::kPass, true, "", 0.1, "", {}};
  r.findings = {finding(Severity::kWarning, "DESC-CHANNEL", "channel 9 is unusual"),
                finding(Severity::kNote, "", "Level 3 seen")};
  return r;
}

CaseResult failing() {
  CaseResult r{"b-fail",
               {"CB-LEVEL-MAX", "CB-ANY-OR"},
               Status::kFail,
               false,
               "CB-LEVEL-MAX: expected 3",
               0.25,
               "",
               {}};
  r.findings = {located(failed_check("CB-LEVEL-MAX", "Level", "p: Level expected 3, observed 2"),
                        "scenarios/x.json", 12, 9)};
  return r;
}

// A PASS the expectations did not foresee (they say TIMEOUT): not as expected, status PASS.
CaseResult unforeseen_pass() {
  return {"c-pass", {"CB-ANY-OR"}, Status::kPass, false, "expected TIMEOUT: slow", 0, "", {}};
}

std::string progress(Verbosity verbosity, bool color = false, int repetition = 0,
                     std::size_t width = 0) {
  std::ostringstream out;
  ProgressPrinter printer(out, 12, verbosity, ConsoleStyle(color), width);
  printer.finished(passing(), repetition);
  printer.finished(failing(), repetition);
  return out.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ProgressPrinter, OneLinePerCaseAndEachFailedCheckAsADiagnostic) {
  const std::string text = progress(Verbosity::kNormal);
  EXPECT_NE(text.find("[ 1/12] PASS  a-pass (0.10 s)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[ 2/12] FAIL  b-fail (0.25 s)\n"
                      "scenarios/x.json:12:9: error: p: Level expected 3, observed 2 "
                      "[CB-LEVEL-MAX]\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(count(text, "Level expected 3"), 1u) << text;
}

TEST(ProgressPrinter, NormalLeavesWarningsToTheSummaryAndNotesToVerbose) {
  const std::string text = progress(Verbosity::kNormal);
  EXPECT_EQ(text.find("channel 9"), std::string::npos) << text;
  EXPECT_EQ(text.find("Level 3 seen"), std::string::npos) << text;
}

TEST(ProgressPrinter, QuietPrintsOnlyCasesNotAsExpectedButCountsAll) {
  const std::string text = progress(Verbosity::kQuiet);
  EXPECT_EQ(text.find("a-pass"), std::string::npos) << text;
  EXPECT_EQ(text.find("warning"), std::string::npos) << text;
  EXPECT_NE(text.find("[ 2/12] FAIL  b-fail"), std::string::npos) << text;
}

TEST(ProgressPrinter, VerboseShowsEveryFindingOfEveryCase) {
  const std::string text = progress(Verbosity::kVerbose);
  EXPECT_NE(text.find("note: Level 3 seen\n"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: channel 9 is unusual [DESC-CHANNEL]\n"), std::string::npos) << text;
}

TEST(ProgressPrinter, ACaseWhoseFailureNoFindingSaysSaysItOnItsLine) {
  std::ostringstream out;
  ProgressPrinter(out, 1, Verbosity::kNormal, ConsoleStyle()).finished(unforeseen_pass(), 0);
  EXPECT_EQ(out.str(), "[1/1] PASS  c-pass (0.00 s): expected TIMEOUT: slow\n");
}

// A fault (TIMEOUT, CRASH, HARNESS_ERROR) is a finding of its own, located in the scenario file
// (never a JSON pointer), under the case's line; its stderr's line breaks stay on one line.
TEST(ProgressPrinter, AFaultIsADiagnosticAtItsStepsPlace) {
  CaseResult r{"d-crash",
               {"CB-ANY-OR"},
               Status::kCrash,
               false,
               "step /cases/0/steps/3 (enable): agent died",
               0.5,
               "",
               {}};
  Finding fault = failed_check("", kCheckFault, "agent \"a\" died: signal 9; stderr: one\ntwo\n");
  fault.step.pointer = "/cases/0/steps/3";
  r.findings = {located(fault, "scenarios/x.json", 30, 9)};
  std::ostringstream out;
  ProgressPrinter(out, 1, Verbosity::kNormal, ConsoleStyle()).finished(r, 0);
  EXPECT_EQ(out.str(),
            "[1/1] CRASH d-crash (0.50 s)\n"
            "scenarios/x.json:30:9: error: agent \"a\" died: signal 9; stderr: one | two\n");
}

TEST(ProgressPrinter, LinesAreCutToTheWidth) {
  const std::string text = progress(Verbosity::kNormal, true, 0, 40);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(visible_width(line), 40u) << line;
  }
  EXPECT_NE(text.find("scenarios/x.json:12:9: \x1b[1;31merror:\x1b[0m p: Level \u2026\x1b[0m\n"),
            std::string::npos)
      << text;
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

TEST(ConsoleLines, FitCountsWhatATerminalShows) {
  EXPECT_EQ(visible_width("\x1b[31mab\x1b[0m\u2026"), 3u);
  EXPECT_EQ(fit("abcdef", 4), "abc\u2026");
  EXPECT_EQ(fit("abcd", 4), "abcd");
  EXPECT_EQ(fit("abcdef", 0), "abcdef");
  EXPECT_EQ(fit("\x1b[31mabcdef\x1b[0m", 3), "\x1b[31mab\u2026\x1b[0m");
}

RunInfo info() {
  RunInfo i;
  i.platform = "etwrt";
  i.duration_s = 2;
  i.catalog_rules = {"CB-LEVEL-MAX", "CB-ANY-OR", "FLT-LEVEL"};
  return i;
}

std::string summary(std::vector<CaseResult> results, ConsoleOptions options = {}) {
  std::ostringstream out;
  ConsoleReport(options).write(info(), results, out);
  return out.str();
}

TEST(ConsoleReport, NamesEveryCaseNotAsExpectedWithTheRulesBlamedOnce) {
  const std::string text = summary({passing(), failing(), unforeseen_pass()});
  const auto section = text.find("Not as expected (2):\n");
  ASSERT_NE(section, std::string::npos) << text;
  EXPECT_NE(text.find("  FAIL b-fail [CB-LEVEL-MAX]\n", section), std::string::npos) << text;
  EXPECT_NE(text.find("  PASS c-pass\n", section), std::string::npos) << text;
  // The live lines said the findings; the summary does not again.
  EXPECT_EQ(text.find("Level expected 3"), std::string::npos) << text;
  EXPECT_NE(text.find("3 cases, 2 not as expected, platform etwrt"), std::string::npos) << text;
}

TEST(ConsoleReport, TheRuleTableListsTheRulesJudgedAllOfThemVerbose) {
  const std::string text = summary({failing()});
  EXPECT_NE(text.find("CB-LEVEL-MAX                   FAIL           1\n"), std::string::npos)
      << text;
  // CB-ANY-OR: named by the failing case, its checks passed.
  EXPECT_NE(text.find("CB-ANY-OR                      PASS           1\n"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("FLT-LEVEL"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 rules of the catalog no case here judges: -v lists them)"),
            std::string::npos)
      << text;
  const std::string verbose = summary({failing()}, {Verbosity::kVerbose, ConsoleStyle(), 0});
  EXPECT_NE(verbose.find("FLT-LEVEL                      UNSUPPORTED    0 (no case)\n"),
            std::string::npos)
      << verbose;
}

TEST(ConsoleReport, GroupsARepeatedWarningWithItsCases) {
  const std::string text = summary({passing("a1"), passing("a2"), passing("a3")});
  EXPECT_EQ(count(text, "channel 9 is unusual"), 1u) << text;
  EXPECT_NE(text.find("warning: channel 9 is unusual [DESC-CHANNEL]\n    in 3 cases: a1, a2, a3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Level 3 seen"), std::string::npos) << text;
  EXPECT_EQ(text.find("Not as expected"), std::string::npos) << text;
  // Verbose printed them under their cases: not again.
  EXPECT_EQ(summary({passing()}, {Verbosity::kVerbose, ConsoleStyle(), 0}).find("channel 9"),
            std::string::npos);
}

TEST(ConsoleReport, QuietLeavesOutTheTableAndTheWarnings) {
  const std::string text = summary({passing(), failing()}, {Verbosity::kQuiet, ConsoleStyle(), 0});
  EXPECT_EQ(text.find("RULE"), std::string::npos) << text;
  EXPECT_EQ(text.find("a-pass"), std::string::npos) << text;
  EXPECT_EQ(text.find("channel 9"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL b-fail"), std::string::npos) << text;
}

TEST(ConsoleReport, NoLineWiderThanTheWidth) {
  CaseResult many = passing();
  many.findings[0].text = std::string(300, 'x');
  const std::string text =
      summary({many, failing(), unforeseen_pass()}, {Verbosity::kNormal, ConsoleStyle(true), 50});
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(visible_width(line), 50u) << line;
  // A warning cut to the width keeps its rule.
  EXPECT_NE(text.find("x\u2026\x1b[0m [DESC-CHANNEL]\n"), std::string::npos) << text;
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
  EXPECT_NE(text.find(", 1 not as expected, 1 flaky, platform"), std::string::npos) << text;
}

TEST(ConsoleReport, ColourOnlyWhenAsked) {
  EXPECT_EQ(summary({passing(), failing()}).find('\x1b'), std::string::npos);
  const std::string colored =
      summary({passing(), failing()}, {Verbosity::kNormal, ConsoleStyle(true), 0});
  EXPECT_NE(colored.find("\x1b[31mFAIL\x1b[0m b-fail"), std::string::npos) << colored;
}

// Lint findings the provider under test intends are notes: not warnings, counted in the summary.
TEST(ConsoleReport, IntendedLintIsCountedNotWarned) {
  CaseResult r = passing();
  Finding intended = finding(Severity::kNote, "DESC-LEVEL-NONZERO", "level 0, intended: why");
  intended.check = kCheckLintIntended;
  r.findings = {intended, intended};
  ConsoleOptions options;
  std::ostringstream out;
  ConsoleReport(options).write(info(), {r, r}, out);
  EXPECT_EQ(out.str().find("warning"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("(1 lint finding the providers under test intend: -v lists them)"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace etwh
