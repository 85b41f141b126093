#include "harness/conformance/scenario.h"
#include "tests/lib/thrown.h"
#include "tests/lib/unplaced.h"
#include "harness/conformance/test_steps.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/providers/providers_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/traits/traits_ops.h"

#include "win32_text.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace etwh {
namespace {

const std::set<std::string> kRules = {"CB-LEVEL-MAX", "CB-ANY-OR", "TR-FORMAT"};

// A valid file; each test breaks one thing in it.
std::string valid(const std::string& step = R"({"op": "enable", "session": "s1", "provider": "p",
        "level": 3, "match_any": "0xff"})") {
  return R"({"cases": [{
    "id": "c1", "rules": ["CB-LEVEL-MAX"], "description": "d",
    "agents": {"a": {}},
    "providers": {"p": {"agent": "a", "guid": "{11111111-2222-3333-4444-555555555555}",
                        "context": "0x10", "delay_ms": 5}},
    "sessions": {"s1": {"buffer_size_kb": 64}},
    "steps": [{"op": "start", "session": "s1"}, {"op": "register", "provider": "p"}, )" +
         step + R"(]
  }]})";
}

// The error without its line:col when it has a pointer (LocatesThePointer checks positions).
std::string error_of(const std::string& text) {
  return test_support::thrown_as<InputError>([&] { load_scenario_text(text, "f.json", kRules); },
                                             test_support::unplaced);
}

// The error of the valid case with an enable step (session s1, provider p) of `fields` more.
std::string enable_error(const std::string& fields) {
  return error_of(valid(R"({"op": "enable", "session": "s1", "provider": "p")" +
                        (fields.empty() ? "" : ", " + fields) + "}"));
}

TEST(Loader, LoadsValidCase) {
  const auto cases = load_scenario_text(valid(), "f.json", kRules);
  ASSERT_EQ(cases.size(), 1u);
  const Case& c = cases[0];
  EXPECT_EQ(c.id, "c1");
  EXPECT_EQ(c.agents, std::vector<std::string>{"a"});
  EXPECT_EQ(c.providers.at("p").context, 0x10u);
  EXPECT_EQ(c.providers.at("p").delay_ms, 5u);
  EXPECT_EQ(format_guid(c.providers.at("p").guid), "{11111111-2222-3333-4444-555555555555}");
  EXPECT_EQ(c.sessions.at("s1").settings["buffer_size_kb"], 64);
  ASSERT_EQ(c.steps.size(), 3u);
  EXPECT_EQ(c.steps[2].op, ops::kEnable);
  EXPECT_EQ(test::body<ControlStep>(c.steps[2]).level, 3);
  EXPECT_EQ(test::body<ControlStep>(c.steps[2]).match_any, 0xFFu);
  EXPECT_FALSE(test::body<ControlStep>(c.steps[2]).has_parameters);
  EXPECT_EQ(c.steps[2].pointer, "/cases/0/steps/2");
}

// A case with 5,002 agents ran past 30 s: agents, sessions and events per case are bounded at
// load (scenarios/README.md), with the pointer.
TEST(Loader, RefusesCasesBeyondTheLimits) {
  std::string agents, sessions;
  for (int i = 0; i <= 16; ++i) agents += (i ? ", \"a" : "\"a") + std::to_string(i) + "\": {}";
  for (int i = 0; i <= 64; ++i) sessions += (i ? ", \"t" : "\"t") + std::to_string(i) + "\": {}";
  std::string many_agents = valid();
  const std::string one_agent = "\"a\": {}";
  many_agents.replace(many_agents.find(one_agent), one_agent.size(), agents);
  EXPECT_EQ(error_of(many_agents),
            "f.json: /cases/0/agents: 17 agents, more than the 16 a case may have");
  std::string many_sessions = valid();
  const std::string one_session = "\"s1\": {\"buffer_size_kb\": 64}";
  many_sessions.replace(many_sessions.find(one_session), one_session.size(),
                        sessions + ", \"s1\": {}");
  EXPECT_EQ(error_of(many_sessions),
            "f.json: /cases/0/sessions: 66 sessions, more than the 64 a case may have");
  const std::string write =
      R"({"op": "write", "provider": "p", "events": [{"id": 1, "count": 600000}]})";
  EXPECT_EQ(error_of(valid(write + ", " + write)),
            "f.json: /cases/0/steps/3/events: more than 1000000 events in one case");
  EXPECT_EQ(error_of(valid(write)), "(no error)");
}

TEST(Loader, SyntaxErrorGivesLineAndColumn) {
  EXPECT_EQ(error_of("{\"cases\": [\n  {\"id\": \"x\",, }\n]}"),
            "f.json:2:14: JSON syntax error: syntax error while parsing object key - "
            "unexpected ','; expected string literal");
}

TEST(Loader, LocatesThePointer) {
  // The bad value's own line and column; a missing field's object; the whole document.
  const std::string bad_level = valid(R"({"op": "enable", "session": "s1", "provider": "p",
      "level": 300})");
  try {
    load_scenario_text(bad_level, "f.json", kRules);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/cases/0/steps/2/level");
    const std::size_t at = bad_level.find("300");
    std::size_t line =
        1 + static_cast<std::size_t>(std::count(bad_level.begin(), bad_level.begin() + at, '\n'));
    EXPECT_EQ(e.line(), line);
    EXPECT_EQ(e.col(), at - bad_level.rfind('\n', at));
    EXPECT_EQ(std::string(e.what()), "f.json:" + std::to_string(e.line()) + ":" +
                                         std::to_string(e.col()) +
                                         ": /cases/0/steps/2/level: level 300 > 255");
  }
  try {
    load_scenario_text("{\n  \"cases\": [\n    {\"id\": \"x\"}]}", "f.json", kRules);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.json:3:5: /cases/0: missing field \"rules\"");
  }
  try {
    load_scenario_text("[]", "f.json", kRules);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "f.json:1:1: /: expected an object, got an array");
  }
}

TEST(Loader, UnknownField) {
  EXPECT_EQ(enable_error(R"("level": 3, "colour": 1)"),
            "f.json: /cases/0/steps/2/colour: unknown field \"colour\"");
}

TEST(Loader, WrongType) {
  EXPECT_EQ(enable_error(R"("level": "3")"),
            "f.json: /cases/0/steps/2/level: expected an integer, got a string");
}

TEST(Loader, MalformedGuid) {
  EXPECT_EQ(enable_error(R"("level": 3, "source_id": "{1234}")"),
            "f.json: /cases/0/steps/2/source_id: malformed GUID \"{1234}\"");
}

TEST(Loader, LevelAbove255) {
  EXPECT_EQ(enable_error(R"("level": 256)"), "f.json: /cases/0/steps/2/level: level 256 > 255");
}

TEST(Loader, KeywordOutOfRange) {
  EXPECT_EQ(enable_error(R"("level": 1, "match_any": "0x10000000000000000")"),
            "f.json: /cases/0/steps/2/match_any: keyword \"0x10000000000000000\" is out of "
            "range (more than 64 bits)");
  EXPECT_EQ(enable_error(R"("level": 1, "match_all": "255")"),
            "f.json: /cases/0/steps/2/match_all: keyword \"255\" is not a \"0x\"-prefixed hex "
            "value");
}

// A session's clock (Wnode.ClientContext): 0 to 3, read as 1 (QPC) when absent or 0.
TEST(Loader, SessionClock) {
  const auto clock_of = [](const std::string& setting) {
    std::string text = valid();
    text.replace(text.find("\"buffer_size_kb\": 64"), 20, setting);
    return text;
  };
  EXPECT_EQ(load_scenario_text(valid(), "f.json", kRules)[0].sessions.at("s1").clock(), 1u);
  for (std::uint32_t c = 0; c <= 3; ++c) {
    const auto cases =
        load_scenario_text(clock_of("\"client_context\": " + std::to_string(c)), "f.json", kRules);
    EXPECT_EQ(cases[0].sessions.at("s1").clock(), c == 0 ? 1u : c);
  }
  EXPECT_EQ(error_of(clock_of("\"client_context\": 4")),
            "f.json: /cases/0/sessions/s1/client_context: client_context 4 is not a clock (0 or "
            "1 QPC, 2 system time, 3 CPU cycles)");
  EXPECT_EQ(error_of(clock_of("\"client_context\": \"system\"")),
            "f.json: /cases/0/sessions/s1/client_context: expected an integer, got a string");
}

TEST(Loader, UnknownRuleId) {
  std::string text = valid();
  text.replace(text.find("\"CB-LEVEL-MAX\""), 14, "\"CB-NOPE\"");
  EXPECT_EQ(error_of(text), "f.json: /cases/0/rules/0: unknown rule ID \"CB-NOPE\"");
}

TEST(Loader, DuplicateCaseId) {
  const std::string one = valid();
  const std::string inner = one.substr(one.find('['), one.rfind(']') - one.find('[') + 1);
  const std::string body = inner.substr(1, inner.size() - 2);
  EXPECT_EQ(error_of("{\"cases\": [" + body + "," + body + "]}"),
            "f.json: /cases/1/id: duplicate case id \"c1\" (first at /cases/0)");
}

TEST(Loader, UndefinedReferences) {
  EXPECT_EQ(error_of(valid(R"({"op": "enable", "session": "s9", "provider": "p", "level": 1})")),
            "f.json: /cases/0/steps/2/session: undefined session \"s9\"");
  EXPECT_EQ(error_of(valid(R"({"op": "register", "provider": "zz"})")),
            "f.json: /cases/0/steps/2/provider: undefined provider \"zz\"");
  EXPECT_EQ(error_of(valid(R"({"op": "kill_agent", "agent": "b"})")),
            "f.json: /cases/0/steps/2/agent: undefined agent \"b\"");
  EXPECT_EQ(error_of(valid(R"({"op": "start", "session": "s1", "via": "ctl"})")),
            "f.json: /cases/0/steps/2/via: undefined agent \"ctl\"");
  std::string text = valid();
  text.replace(text.find("\"agent\": \"a\""), 12, "\"agent\": \"x\"");
  EXPECT_EQ(error_of(text), "f.json: /cases/0/providers/p/agent: undefined agent \"x\"");
}

TEST(Loader, MissingFieldAndUnknownOp) {
  EXPECT_EQ(enable_error(""), "f.json: /cases/0/steps/2: missing field \"level\"");
  EXPECT_EQ(error_of(valid(R"({"op": "jump"})")),
            "f.json: /cases/0/steps/2/op: unknown op \"jump\"");
}

TEST(Loader, TraitsEitherStructuredOrRaw) {
  auto cases = load_scenario_text(
      valid(R"({"op": "set_traits", "provider": "p", "raw": "0400780a"})"), "f.json", kRules);
  EXPECT_TRUE(test::body<TraitsStep>(cases[0].steps[2]).raw);
  EXPECT_EQ(test::body<TraitsStep>(cases[0].steps[2]).blob,
            (std::vector<std::uint8_t>{4, 0, 0x78, 0x0a}));
  cases = load_scenario_text(valid(R"({"op": "set_traits", "provider": "p",
      "traits": {"name": "N", "group": "{11111111-2222-3333-4444-555555555555}",
                 "custom": [{"type": 200, "data": "01"}]}})"),
                             "f.json", kRules);
  EXPECT_EQ(test::body<TraitsStep>(cases[0].steps[2]).name, "N");
  ASSERT_TRUE(test::body<TraitsStep>(cases[0].steps[2]).group);
  ASSERT_EQ(test::body<TraitsStep>(cases[0].steps[2]).custom.size(), 1u);
  EXPECT_EQ(error_of(valid(R"({"op": "set_traits", "provider": "p"})")),
            "f.json: /cases/0/steps/2: set_traits needs exactly one of \"traits\" and \"raw\"");
  EXPECT_EQ(error_of(valid(R"({"op": "set_traits", "provider": "p", "raw": "0g"})")),
            "f.json: /cases/0/steps/2/raw: malformed hex bytes \"0g\"");
}

TEST(Loader, LegacyApiRestrictions) {
  EXPECT_EQ(enable_error(R"("level": 1, "api": "EnableTrace", )"
                         R"("source_id": "{11111111-2222-3333-4444-555555555555}")"),
            "f.json: /cases/0/steps/2: EnableTrace takes no source_id, enable_property or "
            "filters");
  EXPECT_EQ(enable_error(R"("level": 1, "api": "EnableTraceEx3")"),
            "f.json: /cases/0/steps/2/api: api \"EnableTraceEx3\" is not EnableTraceEx2, "
            "EnableTraceEx or EnableTrace");
}

TEST(Loader, ExplicitExpect) {
  auto cases =
      load_scenario_text(valid(R"({"op": "enable", "session": "s1", "provider": "p", "level": 1,
                "expect": {"status": "nonzero"}})"),
                         "f.json", kRules);
  ASSERT_TRUE(cases[0].steps[2].expect_status);
  EXPECT_TRUE(cases[0].steps[2].expect_status->nonzero);
  EXPECT_EQ(enable_error(R"("level": 1, "expect": {"status": "bad"})"),
            "f.json: /cases/0/steps/2/expect/status: status \"bad\" is neither a number nor "
            "\"nonzero\"");
}

TEST(Loader, TopLevelShape) {
  EXPECT_EQ(error_of("[]"), "f.json: /: expected an object, got an array");
  EXPECT_EQ(error_of("{}"), "f.json: /: missing field \"cases\"");
  EXPECT_EQ(error_of("{\"cases\": [], \"x\": 1}"), "f.json: /x: unknown field \"x\"");
}

// Each op's fields are in its own body; the replays that follow every op still find the
// provider and session it names, and nothing for an op without one.
TEST(Loader, StepBodiesByOp) {
  const std::string steps =
      R"({"op": "enable", "session": "s1", "provider": "p", "level": 3},
         {"op": "consume", "consumer": "c", "session": "s1", "agent": "a"},
         {"op": "write", "provider": "p", "events": [{"id": 1}]},
         {"op": "exit_agent", "agent": "a"}, {"op": "collect"})";
  const auto cases = load_scenario_text(valid(steps), "f.json", kRules);
  const auto& st = cases[0].steps;
  ASSERT_EQ(st.size(), 7u);
  EXPECT_TRUE(st[0].body.holds<SessionStep>());
  EXPECT_TRUE(st[1].body.holds<ProviderStep>());
  EXPECT_TRUE(st[2].body.holds<ControlStep>());
  EXPECT_TRUE(st[3].body.holds<ConsumeStep>());
  EXPECT_TRUE(st[4].body.holds<WriteStep>());
  EXPECT_TRUE(st[5].body.holds<AgentStep>());
  EXPECT_TRUE(st[6].body.holds<CollectStep>());
  const std::vector<std::string> providers = {"", "p", "p", "", "p", "", ""};
  const std::vector<std::string> sessions = {"s1", "", "s1", "s1", "", "", ""};
  for (std::size_t i = 0; i < st.size(); ++i) {
    EXPECT_EQ(step_provider(st[i]), providers[i]) << i;
    EXPECT_EQ(step_session(st[i]), sessions[i]) << i;
  }
  EXPECT_EQ(step_body<ControlStep>(st[2]).level, 3);
  EXPECT_THROW(step_body<WriteStep>(st[2]), std::logic_error);
}

TEST(Loader, WriteStepDescriptorsWithAType) {
  const auto cases = load_scenario_text(
      valid(R"({"op": "write", "provider": "p", "use_descriptor_type": true, "events": [
                 {"descriptors": [{"type": 1, "data": "0400"}, {"type": 2, "data": "05"}]}]})"),
      "f.json", kRules);
  const WriteStep& w = test::body<WriteStep>(cases[0].steps[2]);
  EXPECT_EQ(w.use_descriptor_type, std::optional<bool>(true));
  ASSERT_EQ(w.events[0].typed.size(), 2u);
  EXPECT_EQ(w.events[0].typed[0].type, 1);
  EXPECT_EQ(w.events[0].typed[0].data, (std::vector<std::uint8_t>{4, 0}));
  EXPECT_EQ(w.events[0].typed[1].type, 2);
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "events": [
                 {"descriptors": [{"type": 3, "data": "0100000000000000"}]}]})")),
            "f.json: /cases/0/steps/2/events/0/descriptors/0/type: type 3 is not 1 (event "
            "metadata) or 2 (provider metadata)");
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "use_descriptor_type": 1,
                               "events": [{}]})")),
            "f.json: /cases/0/steps/2/use_descriptor_type: expected a boolean, got a number");
}

TEST(Loader, DataPathSteps) {
  const std::string steps =
      R"({"op": "consume", "consumer": "c", "session": "s1", "agent": "a", "mode": "event_trace",
          "context": "0x7", "delay_us": 20},
         {"op": "write", "provider": "p", "lossy": true, "events": [
           {"id": 5, "version": 1, "channel": 16, "level": 4, "opcode": 2, "task": 9,
            "keyword": "0x8000000000000001", "count": 3, "payload": "0a0b"}]},
         {"op": "flush", "session": "s1"}, {"op": "collect"})";
  const auto cases = load_scenario_text(valid(steps), "f.json", kRules);
  const auto& st = cases[0].steps;
  ASSERT_EQ(st.size(), 6u);
  EXPECT_EQ(st[2].op, ops::kConsume);
  EXPECT_EQ(test::body<ConsumeStep>(st[2]).consumer, "c");
  EXPECT_FALSE(test::body<ConsumeStep>(st[2]).event_record_mode);
  EXPECT_EQ(test::body<ConsumeStep>(st[2]).context, 7u);
  EXPECT_EQ(test::body<ConsumeStep>(st[2]).delay_us, 20u);
  EXPECT_EQ(st[3].op, ops::kWrite);
  EXPECT_TRUE(test::body<WriteStep>(st[3]).lossy);
  ASSERT_EQ(test::body<WriteStep>(st[3]).events.size(), 1u);
  const EventDef& e = test::body<WriteStep>(st[3]).events[0];
  EXPECT_EQ(e.id, 5);
  EXPECT_EQ(e.channel, 16);
  EXPECT_EQ(e.task, 9);
  EXPECT_EQ(e.keyword, 0x8000000000000001ull);
  EXPECT_EQ(e.count, 3u);
  EXPECT_EQ(e.payload, (std::vector<std::uint8_t>{0x0a, 0x0b}));
  EXPECT_EQ(st[4].op, ops::kFlush);
  EXPECT_EQ(st[5].op, ops::kCollect);
}

TEST(Loader, DataPathErrors) {
  EXPECT_EQ(error_of(valid(R"({"op": "consume", "consumer": "c", "session": "s1", "agent": "a"},
      {"op": "consume", "consumer": "c", "session": "s1", "agent": "a"})")),
            "f.json: /cases/0/steps/3/consumer: consumer label \"c\" is used twice in the case");
  EXPECT_EQ(error_of(valid(R"({"op": "consume", "consumer": "c", "session": "s1", "agent": "a",
      "mode": "file"})")),
            "f.json: /cases/0/steps/2/mode: mode \"file\" is neither \"event_record\" nor "
            "\"event_trace\"");
  EXPECT_EQ(error_of(valid(R"({"op": "consume", "consumer": "c", "session": "s9", "agent": "a"})")),
            "f.json: /cases/0/steps/2/session: undefined session \"s9\"");
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "events": [{"count": 0}]})")),
            "f.json: /cases/0/steps/2/events/0/count: count must be at least 1");
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "events": [{"level": 256}]})")),
            "f.json: /cases/0/steps/2/events/0/level: level 256 > 255");
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "events": []})")),
            "f.json: /cases/0/steps/2/events: a write step needs at least one event");
  EXPECT_EQ(error_of(valid(R"({"op": "write", "provider": "p", "events": [{"prio": 1}]})")),
            "f.json: /cases/0/steps/2/events/0/prio: unknown field \"prio\"");
  EXPECT_EQ(error_of(valid(R"({"op": "collect", "session": "s1"})")),
            "f.json: /cases/0/steps/2/session: unknown field \"session\"");
}

// Without the check, the driver ran such a case and it ended as a HARNESS_ERROR whose message
// was "vector::_M_range_check ...".
TEST(Loader, WriteNeedsARegisteredProvider) {
  const std::string before = R"({"cases": [{
    "id": "c1", "rules": ["CB-LEVEL-MAX"], "agents": {"a": {}},
    "providers": {"p": {"agent": "a", "guid": "{11111111-2222-3333-4444-555555555555}"}},
    "steps": [{"op": "write", "provider": "p", "events": [{"id": 1}]},
              {"op": "register", "provider": "p"}]}]})";
  EXPECT_EQ(error_of(before),
            "f.json: /cases/0/steps/0/provider: provider \"p\" is written before any register "
            "step of it: a write needs a registered provider (add a register step before it)");
  try {
    load_scenario_text(before, "f.json", kRules);
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.json:4:43: /cases/0/steps/0/provider: ", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(error_of(valid(R"({"op": "unregister", "provider": "p"},
      {"op": "write", "provider": "p", "events": [{"id": 1}]})")),
            "f.json: /cases/0/steps/3/provider: provider \"p\" is written after its unregister "
            "step (/cases/0/steps/2): a write needs a registered provider (add a register step "
            "before it)");
  EXPECT_EQ(error_of(valid(R"({"op": "unregister", "provider": "p"},
      {"op": "register", "provider": "p"},
      {"op": "write", "provider": "p", "events": [{"id": 1}]})")),
            "(no error)");
}

}  // namespace
}  // namespace etwh
