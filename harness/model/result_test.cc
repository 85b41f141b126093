// The readable summary of a case is made from its findings: step failures grouped per step,
// the fault, lint, notes only when nothing failed, the expectation last.
#include "harness/model/result.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace etwh {
namespace {

Finding at_step(Finding f, const char* pointer, const char* op) {
  f.step.pointer = pointer;
  f.step.op = op;
  return f;
}

Finding note(const char* check, const char* text) {
  Finding f;
  f.check = check;
  f.text = text;
  f.severity = Severity::kNote;
  return f;
}

TEST(Summarize, GroupsFailuresPerStepAndKeepsNotesForPasses) {
  const std::vector<Finding> failed = {
      at_step(failed_check("CB-LEVEL-MAX", "Level", "p: Level expected 3, observed 2", "3", "2"),
              "/cases/0/steps/2", "enable"),
      at_step(failed_check("", "status", "status expected 0, observed 5", "0", "5"),
              "/cases/0/steps/2", "enable"),
      note(kCheckObserved, "p: SourceId {0}"), note(kCheckExpectation, "expected FAIL: known")};
  EXPECT_EQ(summarize(failed, ""),
            "step /cases/0/steps/2 (enable): CB-LEVEL-MAX: p: Level expected 3, observed 2; "
            "setup: status expected 0, observed 5 | expected FAIL: known");
  EXPECT_EQ(summarize({note(kCheckObserved, "a"), note(kCheckObserved, "b")}, ""),
            "observed (not judged): a; b");
  EXPECT_EQ(summarize({note(kCheckObserved, "a")}, "step /x (collect): agent died"),
            "step /x (collect): agent died");
}

TEST(Summarize, LintThenItsExpectation) {
  Finding lint = failed_check("DESC-CHANNEL", kCheckLint, "FAILURE DESC-CHANNEL c: channel");
  Finding missing =
      failed_check("TR-SIZE-256", kCheckExpectLint, "lint rule TR-SIZE-256 did not fire");
  EXPECT_EQ(summarize({lint, missing}, ""),
            "lint: FAILURE DESC-CHANNEL c: channel | lint rule TR-SIZE-256 did not fire");
}

// A finding about an event a consumer got reads with the event decoded, not its bytes.
TEST(Summarize, ShowsTheDecodedEventOfAFinding) {
  Finding f = at_step(failed_check("CON-RECORD-MODE", "fields", "event #3: level expected 4"),
                      "/cases/0/steps/5", "collect");
  f.event = DecodedEvent{"Etwh.Tl.Event", {{"n", "42"}, {"s", "hi"}}};
  EXPECT_EQ(summarize({f}, ""),
            "step /cases/0/steps/5 (collect): CON-RECORD-MODE: event #3: level expected 4 "
            "[event Etwh.Tl.Event(n=42, s=hi)]");
  f.event = DecodedEvent{"", {}};
  EXPECT_EQ(describe(f), "CON-RECORD-MODE: event #3: level expected 4 [event (unnamed)()]");
}

TEST(Status, NamesRoundTrip) {
  for (Status s : {Status::kPass, Status::kFail, Status::kXFail, Status::kXPass,
                   Status::kUnsupported, Status::kTimeout, Status::kCrash, Status::kHarnessError}) {
    EXPECT_EQ(parse_status(status_name(s)), s);
  }
  EXPECT_EQ(parse_status("pass"), std::nullopt);
}

// --- The one judge of rules: a verdict per rule from the case's own findings ------------

CaseResult failed_case(std::vector<Finding> findings, Status status = Status::kFail) {
  CaseResult r;
  r.id = "c";
  r.rules = {"CB-LEVEL-MAX", "FLT-LEVEL", "CON-ORDER"};
  r.status = status;
  r.findings = std::move(findings);
  return r;
}

const CaseRuleVerdict& verdict_of(const std::vector<std::pair<std::string, CaseRuleVerdict>>& all,
                                  const std::string& rule) {
  for (const auto& [id, v] : all) {
    if (id == rule) return v;
  }
  throw std::out_of_range("no verdict for " + rule);
}

Finding at_index(Finding f, std::size_t index, const char* op) {
  f.step.index = index;
  f.step.op = op;
  return f;
}

TEST(RuleVerdicts, OnlyTheRuleOfTheFailedCheckIsRed) {
  const auto v = rule_verdicts_of(
      failed_case({at_index(failed_check("FLT-LEVEL", "missing", "event 2 missing"), 4, "collect"),
                   note(kCheckObserved, "p: SourceId {0}")}));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(verdict_of(v, "FLT-LEVEL").status, Status::kFail);
  EXPECT_EQ(verdict_of(v, "FLT-LEVEL").reason, "check missing failed at step 4 (collect)");
  EXPECT_EQ(verdict_name(verdict_of(v, "FLT-LEVEL")), "FAIL");
  EXPECT_EQ(verdict_of(v, "CB-LEVEL-MAX").status, Status::kPass);
  EXPECT_TRUE(verdict_of(v, "CB-LEVEL-MAX").reached);
  EXPECT_EQ(verdict_of(v, "CON-ORDER").status, Status::kPass);
}

TEST(RuleVerdicts, RulesAfterTheFailedStepAreNotReached) {
  CaseResult r = failed_case(
      {at_index(failed_check("CB-LEVEL-MAX", "Level", "Level 1", "3", "1"), 2, "enable")});
  r.unreached = {"CON-ORDER"};
  const auto v = rule_verdicts_of(r);
  EXPECT_EQ(verdict_of(v, "CB-LEVEL-MAX").status, Status::kFail);
  EXPECT_EQ(verdict_of(v, "FLT-LEVEL").status, Status::kPass);
  EXPECT_FALSE(verdict_of(v, "CON-ORDER").reached);
  EXPECT_EQ(verdict_name(verdict_of(v, "CON-ORDER")), "NOT_REACHED");
  EXPECT_EQ(verdict_of(v, "CON-ORDER").reason,
            "the case stopped at step 2 (enable) (FAIL), before its checks");
}

TEST(RuleVerdicts, AFailureWithoutARuleTurnsNoRuleRed) {
  for (Status s : {Status::kHarnessError, Status::kTimeout, Status::kCrash}) {
    const auto v = rule_verdicts_of(failed_case({}, s));
    for (const auto& [rule, verdict] : v) {
      EXPECT_FALSE(verdict.reached) << rule;
      EXPECT_NE(verdict.status, Status::kFail) << rule;
    }
  }
  // A failed setup step (no rule): the case fails, its rules are not judged red.
  const auto setup = rule_verdicts_of(failed_case({failed_check("", "status", "cannot start")}));
  for (const auto& [rule, verdict] : setup) EXPECT_EQ(verdict.status, Status::kPass) << rule;
}

TEST(RuleVerdicts, ExpectedFailureAndUnexpectedPass) {
  const auto xfail =
      rule_verdicts_of(failed_case({failed_check("FLT-LEVEL", "missing", "m")}, Status::kXFail));
  EXPECT_EQ(verdict_of(xfail, "FLT-LEVEL").status, Status::kXFail);
  EXPECT_EQ(verdict_of(xfail, "CB-LEVEL-MAX").status, Status::kPass);
  const auto xpass = rule_verdicts_of(failed_case({}, Status::kXPass));
  EXPECT_EQ(verdict_of(xpass, "CB-LEVEL-MAX").status, Status::kXPass);
  const auto unsupported = rule_verdicts_of(failed_case({}, Status::kUnsupported));
  EXPECT_EQ(verdict_of(unsupported, "CON-ORDER").status, Status::kUnsupported);
}

TEST(RuleVerdicts, AFailedCheckOfARuleTheCaseDoesNotNameJudgesItToo) {
  Finding lint = failed_check("DESC-CHANNEL", kCheckLint, "channel 9");
  Finding warning = failed_check("DESC-KEYWORD-NONZERO", kCheckLint, "keyword 0");
  warning.severity = Severity::kWarning;
  const auto v = rule_verdicts_of(failed_case({lint, warning}));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v.back().first, "DESC-CHANNEL");
  EXPECT_EQ(v.back().second.status, Status::kFail);
}

}  // namespace
}  // namespace etwh
