#include "harness/conformance/families/subjects/subject_oracle.h"

#include "harness/conformance/oracle.h"
#include "harness/conformance/test_steps.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/providers/providers_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/subjects/subjects_ops.h"

#include <evntprov.h>
#include <gtest/gtest.h>

namespace etwh::subject {
namespace {

using nlohmann::json;

EventDef ev(std::uint16_t id, std::uint8_t level, std::uint64_t keyword) {
  EventDef e;
  e.id = id;
  e.level = level;
  e.keyword = keyword;
  return e;
}

Description manifest_like() {
  Description d;
  d.test_events = {ev(1, 1, 0x1), ev(2, 3, 0x3), ev(3, 4, 0), ev(4, 5, 0x4)};
  d.state_events = {ev(100, 0, 0)};
  d.id_filter = 0x7e57;
  return d;
}

Step step(std::string_view op, const std::string& pointer) {
  Step s = test::make_step(op, "s", "p");
  s.pointer = pointer;
  return s;
}

// A case: session s consumed by c; p is the subject provider.
Case base_case(std::vector<Step> middle) {
  Case c;
  c.id = "t";
  c.agents = {"subj", "a"};
  c.subject_agents = {"subj"};
  ProviderDef p;
  p.label = "p";
  p.agent = "subj";
  p.subject = true;
  c.providers["p"] = p;
  c.sessions["s"] = SessionDef{"s", json::object(), {}};
  Step consume = step(ops::kConsume, "/consume");
  test::body<ConsumeStep>(consume).consumer = "c";
  test::body<ConsumeStep>(consume).agent = "a";
  c.steps = {step(ops::kStart, "/start"), step(ops::kRegister, "/register"), consume};
  c.steps.insert(c.steps.end(), middle.begin(), middle.end());
  c.steps.push_back(step(ops::kCollect, "/collect"));
  return c;
}

Step enable_step(std::uint8_t level, std::uint64_t match_any) {
  Step enable = step(ops::kEnable, "/enable");
  test::body<ControlStep>(enable).level = level;
  test::body<ControlStep>(enable).match_any = match_any;
  return enable;
}

Step inject_step(const InjectCallbackStep& arguments) {
  Step inject = step(ops::kInjectCallback, "/inject");
  test::body<InjectCallbackStep>(inject) = arguments;
  return inject;
}

// The subject p's events (described as manifest_like) that each consumer of `c` expects.
auto subject_events(const Case& c) {
  return expect_subject_events(c, oracle::expect_case(c), "p", manifest_like());
}

std::vector<std::uint16_t> ids(const Segment& s) {
  std::vector<std::uint16_t> out;
  for (const EventDef& e : s.events) out.push_back(e.id);
  return out;
}

json record(const EventDef& e) {
  return {{"id", e.id}, {"level", e.level}, {"keyword", "0x" + std::to_string(e.keyword)}};
}

TEST(SubjectOracle, WritesWhatTheRecordedFilterAndTheSessionBothTake) {
  Step enable = enable_step(4, 0x3);
  Case c = base_case({enable, step(ops::kSubjectWrite, "/write")});
  const auto out = subject_events(c);
  ASSERT_EQ(out.at("c").size(), 1u);
  // Level 5 fails the level test; keyword 0 passes; 0x3 has a bit of MatchAny.
  EXPECT_EQ(ids(out.at("c")[0]), (std::vector<std::uint16_t>{1, 2, 3}));
  EXPECT_EQ(out.at("c")[0].rules.front(), "PROV-EVENT-ENABLED");
}

TEST(SubjectOracle, InjectedNarrowerEnableShowsWhatTheProviderMustSkip) {
  Step enable = enable_step(5, 0xff);
  Step inject = inject_step({"p", 1, 5, 0xff, 0x2});
  Case c = base_case({enable, inject, step(ops::kSubjectWrite, "/write")});
  const auto out = subject_events(c);
  // 0x1 and 0x4 lack MatchAll's bit 0x2; keyword 0 is always written.
  EXPECT_EQ(ids(out.at("c")[0]), (std::vector<std::uint16_t>{2, 3}));
}

TEST(SubjectOracle, UnknownCodeChangesNothingAndNamesItsRule) {
  Step enable = enable_step(1, 0x1);
  Step inject = inject_step({"p", 3});
  Case c = base_case({enable, inject, step(ops::kSubjectWrite, "/write")});
  const auto out = subject_events(c);
  EXPECT_EQ(ids(out.at("c")[0]), (std::vector<std::uint16_t>{1}));
  EXPECT_EQ(out.at("c")[0].rules.front(), "CB-UNKNOWN-CODE");
}

TEST(SubjectOracle, FilterDataSkipsTheListedIds) {
  Step enable = enable_step(5, 0xff);
  // EVENT_FILTER_HEADER with Id 0x7e57 and Size 28, then IDs 2 and 3.
  std::vector<std::uint8_t> data(sizeof(EVENT_FILTER_HEADER), 0);
  data[0] = 0x57;
  data[1] = 0x7e;
  data.insert(data.end(), {2, 0, 3, 0});
  test::body<ControlStep>(enable).filters = {FilterDef{EVENT_FILTER_TYPE_SCHEMATIZED, data}};
  test::body<ControlStep>(enable).has_parameters = true;
  EXPECT_EQ(skipped_ids(test::body<ControlStep>(enable).filters, 0x7e57),
            (std::set<std::uint16_t>{2, 3}));
  EXPECT_TRUE(skipped_ids(test::body<ControlStep>(enable).filters, 0x1111).empty());
  Case c = base_case({enable, step(ops::kSubjectWrite, "/write")});
  const auto out = subject_events(c);
  EXPECT_EQ(ids(out.at("c")[0]), (std::vector<std::uint16_t>{1, 4}));
  EXPECT_EQ(out.at("c")[0].rules.front(), "CB-FILTER-COPY");
}

TEST(SubjectOracle, CaptureStateExpectsTheStateEvents) {
  Step enable = enable_step(1, 0x1);
  Step capture = step(ops::kCaptureState, "/capture");
  test::body<ControlStep>(capture).level = 1;
  Case c = base_case({enable, capture});
  const auto out = subject_events(c);
  ASSERT_EQ(out.at("c").size(), 1u);
  EXPECT_EQ(ids(out.at("c")[0]), (std::vector<std::uint16_t>{100}));
  EXPECT_EQ(out.at("c")[0].rules.front(), "PROV-CAPTURE-STATE");
}

TEST(SubjectOracle, JudgeNamesTheSegmentsRuleOnAMismatchAndOnExtras) {
  std::vector<Segment> segments = {
      {"/w1", "first", {"PROV-EVENT-ENABLED"}, {ev(1, 1, 1), ev(2, 2, 2)}},
      {"/w2", "second", {"PROV-RECORD"}, {}}};
  EXPECT_TRUE(judge_records(segments, {record(ev(1, 1, 1)), record(ev(2, 2, 2))}, {}).empty());
  auto missing = judge_records(segments, {record(ev(1, 1, 1))}, {});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].rule, "PROV-EVENT-ENABLED");
  EXPECT_NE(missing[0].text.find("/w1"), std::string::npos);
  // The difference, not both lists: the one missing event, not the one that came.
  EXPECT_NE(missing[0].text.find("2 events expected, 1 received: 1 missing: [id 2"),
            std::string::npos)
      << missing[0].text;
  EXPECT_EQ(missing[0].text.find("id 1"), std::string::npos) << missing[0].text;
  auto swapped = judge_records(segments, {record(ev(1, 1, 1)), record(ev(3, 3, 0))}, {});
  ASSERT_EQ(swapped.size(), 1u);
  EXPECT_NE(swapped[0].text.find("1 missing: [id 2"), std::string::npos) << swapped[0].text;
  EXPECT_NE(swapped[0].text.find("; 1 unexpected: [id 3"), std::string::npos) << swapped[0].text;
  auto extra =
      judge_records(segments, {record(ev(1, 1, 1)), record(ev(2, 2, 2)), record(ev(3, 3, 0))}, {});
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0].rule, "PROV-RECORD");
  EXPECT_NE(extra[0].text.find("id 3"), std::string::npos);

  // Events written in a step that expected none come before the next step's: they are that
  // step's extras (the provider that ignores DISABLE), not a mismatch of the step after it.
  const std::vector<Segment> after_disable = {
      {"/w1", "first", {"PROV-EVENT-ENABLED"}, {ev(1, 1, 1)}},
      {"/w2", "while disabled", {"PROV-RECORD"}, {}},
      {"/w3", "enabled again", {"PROV-EVENT-ENABLED", "PROV-RECORD"}, {ev(2, 2, 2)}}};
  auto early =
      judge_records(after_disable, {record(ev(1, 1, 1)), record(ev(3, 3, 0)), record(ev(2, 2, 2))},
                    {"PROV-RECORD", "PROV-EVENT-ENABLED"});
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].rule, "PROV-RECORD");
  EXPECT_EQ(early[0].check, "extra events");
  EXPECT_NE(early[0].text.find("step /w2 (while disabled): 1 events, none expected: [id 3"),
            std::string::npos)
      << early[0].text;
}

const std::set<std::string> kRules = {"PROV-RECORD", "CB-FAST"};

std::string subject_case(const std::string& providers, const std::string& steps) {
  return R"({"cases": [{"id": "x", "rules": ["PROV-RECORD"],
    "agents": {"subj": {"subject": true}, "a": {}},
    "providers": )" +
         providers + R"(, "sessions": {"s": {}}, "steps": )" + steps + "}]}";
}

TEST(SubjectLoader, ReadsSubjectAgentsProvidersAndSteps) {
  const auto cases =
      load_scenario_text(subject_case(R"({"p": {"agent": "subj", "callback_budget_ms": 50},
                       "q": {"agent": "a", "guid": "{11111111-2222-3333-4444-555555555555}"}})",
                                      R"([{"op": "register", "provider": "p"},
                       {"op": "inject_callback", "provider": "p", "is_enabled": 3, "level": 2},
                       {"op": "subject_write", "provider": "p", "which": "state"}])"),
                         "t.json", kRules);
  ASSERT_EQ(cases.size(), 1u);
  const Case& c = cases[0];
  EXPECT_EQ(c.subject_agents, (std::set<std::string>{"subj"}));
  EXPECT_TRUE(c.providers.at("p").subject);
  EXPECT_EQ(c.providers.at("p").callback_budget_ms, 50u);
  EXPECT_FALSE(c.providers.at("q").subject);
  EXPECT_EQ(c.steps[1].op, ops::kInjectCallback);
  EXPECT_EQ(test::body<InjectCallbackStep>(c.steps[1]).is_enabled, 3u);
  EXPECT_EQ(test::body<InjectCallbackStep>(c.steps[1]).level, 2);
  EXPECT_EQ(c.steps[2].op, ops::kSubjectWrite);
  EXPECT_TRUE(test::body<SubjectWriteStep>(c.steps[2]).state_events);
}

TEST(SubjectLoader, RejectsMisusedSubjects) {
  auto error = [](const std::string& text) {
    try {
      load_scenario_text(text, "t.json", kRules);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  // Settings a subject's provider cannot take: its context and callback are the user's.
  EXPECT_NE(error(subject_case(R"({"p": {"agent": "subj", "context": "0x1"}})",
                               "[{\"op\": \"collect\"}]"))
                .find("/cases/0/providers/p/context: unknown field"),
            std::string::npos);
  EXPECT_NE(error(subject_case(R"({"p": {"agent": "subj"}, "q": {"agent": "subj"}})",
                               "[{\"op\": \"collect\"}]"))
                .find("one provider under test per subject agent"),
            std::string::npos);
  EXPECT_NE(error(subject_case(
                      R"({"q": {"agent": "a", "guid": "{11111111-2222-3333-4444-555555555555}"}})",
                      R"([{"op": "subject_write", "provider": "q"}])"))
                .find("/cases/0/steps/0/provider: provider \"q\" is not a provider under test"),
            std::string::npos);
  EXPECT_NE(error(subject_case(R"({"p": {"agent": "subj"}})",
                               R"([{"op": "subject_write", "provider": "p", "which": "all"}])"))
                .find("which \"all\""),
            std::string::npos);
  EXPECT_NE(error(subject_case(R"({"p": {"agent": "subj"}})",
                               R"([{"op": "inject_callback", "provider": "p"}])"))
                .find("missing field \"is_enabled\""),
            std::string::npos);
  EXPECT_NE(
      error(R"({"cases": [{"id": "x", "rules": ["PROV-RECORD"], "agents": {"a": {"subject": 1}},
                      "steps": [{"op": "collect"}]}]})")
          .find("/cases/0/agents/a/subject: expected a boolean"),
      std::string::npos);
}

TEST(SubjectOracle, DescriptionRejectsMalformedReplies) {
  EXPECT_THROW(parse_description({{"test_events", {{{"id", -1}}}}}), std::runtime_error);
  EXPECT_THROW(parse_description({{"test_events", {{{"keyword", 5}}}}}), std::runtime_error);
  const Description d = parse_description(
      {{"test_events", {{{"id", 7}, {"level", 2}, {"keyword", "0x10"}}}}, {"id_filter", 12}});
  ASSERT_EQ(d.test_events.size(), 1u);
  EXPECT_EQ(d.test_events[0].keyword, 0x10u);
  EXPECT_EQ(d.id_filter, 12);
  EXPECT_TRUE(d.intended_lint.empty());
}

TEST(SubjectOracle, DescriptionReadsTheLintTheProviderIntends) {
  const Description d =
      parse_description({{"intended_lint",
                          {{{"rule", "DESC-LEVEL-NONZERO"},
                            {"event", {{"id", 6}, {"level", 0}, {"keyword", "0x10"}}},
                            {"reason", "LOG_ALWAYS"}}}}});
  ASSERT_EQ(d.intended_lint.size(), 1u);
  const lint::Intent& i = d.intended_lint[0];
  EXPECT_EQ(i.reason, "LOG_ALWAYS");
  EXPECT_TRUE(i.matches("DESC-LEVEL-NONZERO", {6, 0, 0, 0, 0, 0x10, 4}));
  EXPECT_FALSE(i.matches("DESC-KEYWORD-NONZERO", {6, 0, 0, 0, 0, 0x10, 4}));
  EXPECT_FALSE(i.matches("DESC-LEVEL-NONZERO", {6, 0, 0, 0, 0, 0x20, 4}));  // another event
  EXPECT_THROW(parse_description({{"intended_lint", {{{"event", {{"id", 6}}}}}}}),
               std::runtime_error);
  EXPECT_THROW(
      parse_description({{"intended_lint", {{{"rule", "X"}, {"event", {{"id", 70000}}}}}}}),
      std::runtime_error);
}

}  // namespace
}  // namespace etwh::subject
