// judge.h and filter_judge.h on hand-made observation records: a rule the schedule never
// exercised is NOT JUDGED (its own UNSUPPORTED case, the reason as data), never a pass.
#include "harness/observe/judge.h"
#include "tests/lib/thrown.h"

#include "harness/model/catalog.h"
#include "harness/observe/filter_judge.h"
#include "harness/model/input_error.h"
#include "harness/model/rules.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace etwh::observe {
namespace {

using nlohmann::json;

const Catalog& catalog() {
  static const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  return c;
}

Schedule schedule() {
  return parse_schedule(R"({"steps": [
      {"name": "on", "actions": [{"op": "enable", "session": 0, "level": 5}]},
      {"name": "off", "actions": [{"op": "disable", "session": 0}]}]})",
                        "s.json");
}

json reg() { return {{"kind", "register"}, {"handle", 7}, {"guid", "g"}}; }
json callback(unsigned is_enabled) {
  return {{"kind", "callback"}, {"handle", 7}, {"is_enabled", is_enabled}, {"level", 5}};
}
json write() {
  return {{"kind", "write"}, {"handle", 7}, {"id", 1}, {"level", 4}, {"wanted", true}};
}

std::vector<CaseResult> judge(const std::vector<json>& records, const std::vector<StepMark>& marks,
                              const Schedule& s) {
  JudgeInput in{&records, &marks, &s, "s.json", &catalog()};
  return judge_providers(in);
}

const CaseResult* find(const std::vector<CaseResult>& cases, const std::string& id) {
  auto it =
      std::find_if(cases.begin(), cases.end(), [&](const CaseResult& c) { return c.id == id; });
  return it == cases.end() ? nullptr : &*it;
}

bool names(const CaseResult& c, const char* rule) {
  return std::find(c.rules.begin(), c.rules.end(), rule) != c.rules.end();
}

TEST(ObserveJudge, ProviderGoneBeforeTheDisableStepIsNotJudgedOnProvRecord) {
  const Schedule s = schedule();
  // Step 0 began at record 1; the provider unregistered before step 1 ("off") began.
  const auto cases =
      judge({reg(), callback(1), write(), write(), {{"kind", "unregister"}, {"handle", 7}}},
            {{7, 0, 1}}, s);
  const CaseResult* provider = find(cases, "observe/g");
  ASSERT_NE(provider, nullptr);
  EXPECT_EQ(provider->status, Status::kPass);
  EXPECT_FALSE(names(*provider, rules::kProvRecord));
  EXPECT_TRUE(names(*provider, rules::kProvEventEnabled));
  const CaseResult* record = find(cases, std::string("observe/g/") + rules::kProvRecord);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->status, Status::kUnsupported);
  EXPECT_TRUE(record->as_expected);
  ASSERT_EQ(record->findings.size(), 1u);
  const Finding& f = record->findings[0];
  EXPECT_EQ(f.check, kNotJudgedCheck);
  EXPECT_EQ(f.observed, kStepNotReached);
  EXPECT_EQ(f.rule, rules::kProvRecord);
  EXPECT_EQ(f.step.pointer, "/steps/1");
}

TEST(ObserveJudge, ProviderWatchedThroughItsDisableIsJudgedOnProvRecord) {
  const Schedule s = schedule();
  // Step 0 at record 1, step 1 at record 4 (its DISABLE callback is record 4), the end at 5.
  const auto cases = judge({reg(), callback(1), write(), write(), callback(0), write()},
                           {{7, 0, 1}, {7, 1, 4}, {7, 2, 5}}, s);
  const CaseResult* provider = find(cases, "observe/g");
  ASSERT_NE(provider, nullptr);
  EXPECT_TRUE(names(*provider, rules::kProvRecord));
  EXPECT_EQ(find(cases, std::string("observe/g/") + rules::kProvRecord), nullptr);
}

TEST(ObserveJudge, NoWriteWhileEnabledLeavesProvEventEnabledNotJudged) {
  const Schedule s = schedule();
  const auto cases = judge({reg(), callback(1)}, {{7, 0, 1}}, s);
  const CaseResult* c = find(cases, std::string("observe/g/") + rules::kProvEventEnabled);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->findings.at(0).observed, kNoWrite);
  const CaseResult* d = find(cases, std::string("observe/g/") + rules::kDescChannel);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->findings.at(0).observed, kNoWrite);
}

std::string schedule_error(const std::string& text) {
  return test_support::thrown<InputError>([&] { parse_schedule(text, "s.json"); }, "");
}

TEST(ObserveSchedule, EventIdFiltersParseAndBadOnesArePlaced) {
  const Schedule s = parse_schedule(R"({"steps": [{"name": "f", "actions": [{"op": "enable",
      "session": 2, "level": 5, "event_ids": {"filter_in": false, "ids": [1, 3]}}]}]})",
                                    "s.json");
  const Action& a = s.steps[0].actions[0];
  ASSERT_TRUE(a.event_ids);
  EXPECT_FALSE(a.event_ids->filter_in);
  EXPECT_TRUE(a.event_ids->excludes(3));
  EXPECT_FALSE(a.event_ids->excludes(2));
  EXPECT_NE(schedule_error(R"({"steps": [{"name": "f", "actions": [{"op": "disable",
      "event_ids": {"ids": [1]}}]}]})")
                .find("/steps/0/actions/0/event_ids: only an enable has event_ids"),
            std::string::npos);
  EXPECT_NE(schedule_error(R"({"steps": [{"name": "f", "actions": [{"op": "enable",
      "event_ids": {"ids": [1, 70000]}}]}]})")
                .find("/steps/0/actions/0/event_ids/ids/1: an event ID is an integer"),
            std::string::npos);
  EXPECT_NE(schedule_error(R"({"steps": [{"name": "f", "actions": [{"op": "enable",
      "event_ids": {"ids": []}}]}]})")
                .find("/steps/0/actions/0/event_ids/ids: ids must be an array of 1 to 64"),
            std::string::npos);
}

// The event ID filter judgement on hand-made accounts: an excluded ID that reached the session
// fails FLT-PER-SESSION; the same session also enabled without the filter is not judged.
TEST(ObserveFilterJudge, ExcludedIdReachingTheSessionFails) {
  const Schedule s = parse_schedule(R"({"steps": [
      {"name": "f", "actions": [{"op": "enable", "session": 2, "level": 5,
                                 "event_ids": {"ids": [1]}}]},
      {"name": "off", "actions": [{"op": "disable", "session": 2}]}]})",
                                    "s.json");
  const std::vector<json> records = {reg(), write(), write()};  // ID 1: the filter keeps it
  std::vector<json> with_excluded = records;  // and one of ID 2, which it excludes
  json other = write();
  other["id"] = 2;
  with_excluded.push_back(other);
  const std::vector<StepMark> marks = {{7, 0, 1}, {7, 1, 4}};
  SessionAccount account;
  account.index = 2;
  account.name = "s2";
  account.delivered_ids = {{1, 2}};
  std::vector<SessionAccount> accounts = {account};
  FilterJudgeInput in{&s, "s.json", &accounts, &with_excluded, &marks};
  std::optional<CaseResult> c = judge_event_id_filters(in);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kPass);
  accounts[0].delivered_ids[2] = 1;  // the excluded ID 2 reached it
  c = judge_event_id_filters(in);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kFail);
  EXPECT_EQ(c->findings.at(0).rule, rules::kFltPerSession);
  EXPECT_EQ(c->findings.at(0).observed, "1");
  // No excluded ID written while the filter applied: not judged.
  FilterJudgeInput quiet{&s, "s.json", &accounts, &records, &marks};
  c = judge_event_id_filters(quiet);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, Status::kUnsupported);
  EXPECT_EQ(c->findings.at(0).observed, kNoWrite);
}

}  // namespace
}  // namespace etwh::observe
