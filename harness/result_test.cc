// The readable summary of a case is made from its findings: step failures grouped per step,
// the fault, lint, notes only when nothing failed, the expectation last.
#include "result.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace etwh
