// The classic oracle (classic_steps.h) on made-up cases: takeover, ControlCallbacks, statuses
// of TraceEvent's header checks, and which consumer must (or must not) get each event.
#include "harness/conformance/classic_steps.h"

#include "harness/conformance/oracle.h"
#include "harness/conformance/scenario.h"

#include <gtest/gtest.h>

namespace etwh {
namespace {

const std::set<std::string> kRules = {"SES-CLASSIC-ONE", "HDR-CLASSIC-LEVEL", "HDR-SIZE",
                                      "HDR-FLAGS",       "DESC-MOF-OPCODE",   "CON-WPP"};

Case one_case(const std::string& steps, const std::string& sessions = R"({"a": {}, "b": {}})") {
  const std::string text = R"({"cases": [{"id": "c", "rules": ["SES-CLASSIC-ONE"],
    "agents": {"prov": {}, "cons": {}},
    "providers": {"p": {"agent": "prov", "guid": "{c1a5c001-0000-4000-8000-0000000000aa}"}},
    "sessions": )" + sessions +
                           R"(, "steps": )" + steps + "}]}";
  return load_scenario_text(text, "test.json", kRules).at(0);
}

TEST(ClassicOracle, SecondSessionTakesOverAndEventsFollowTheOwner) {
  const Case c = one_case(R"([
    {"op": "register_classic", "provider": "p"},
    {"op": "start", "session": "a"}, {"op": "start", "session": "b"},
    {"op": "consume", "consumer": "ca", "session": "a", "agent": "cons"},
    {"op": "consume", "consumer": "cb", "session": "b", "agent": "cons"},
    {"op": "enable", "session": "a", "provider": "p", "level": 4, "match_any": "0x5", "api": "EnableTrace"},
    {"op": "trace_event", "provider": "p", "type": 10, "level": 4},
    {"op": "enable", "session": "b", "provider": "p", "level": 2, "match_any": "0x3", "api": "EnableTrace"},
    {"op": "trace_event", "provider": "p", "type": 11, "level": 2},
    {"op": "disable", "session": "a", "provider": "p", "api": "EnableTrace"},
    {"op": "disable", "session": "b", "provider": "p", "api": "EnableTrace"},
    {"op": "collect"}])");
  const std::vector<oracle::StepExpectation> e = oracle::expect_case(c);
  ASSERT_EQ(e.size(), c.steps.size());
  ASSERT_EQ(e[5].classic.callbacks.size(), 1u);
  EXPECT_EQ(e[5].classic.callbacks[0].code, 4u);  // WMI_ENABLE_EVENTS
  EXPECT_EQ(e[5].classic.callbacks[0].level, 4);
  EXPECT_EQ(e[5].classic.callbacks[0].flags, 0x5u);
  EXPECT_EQ(e[5].classic.callbacks[0].session, "a");
  ASSERT_EQ(e[7].classic.callbacks.size(), 1u);
  EXPECT_EQ(e[7].classic.callbacks[0].session, "b");
  EXPECT_EQ(e[7].classic.callbacks[0].flags, 0x3u);
  EXPECT_TRUE(e[9].classic.callbacks.empty());  // a lost the provider: its disable is moot
  ASSERT_EQ(e[10].classic.callbacks.size(), 1u);
  EXPECT_EQ(e[10].classic.callbacks[0].code, 5u);  // WMI_DISABLE_EVENTS
  EXPECT_EQ(e[6].classic.first_seq, classic::kFirstSequence);
  EXPECT_EQ(e[8].classic.first_seq, classic::kFirstSequence + 1);

  const auto& consumers = e[11].consumers;
  ASSERT_EQ(consumers.size(), 2u);
  for (const oracle::ConsumerExpectation& ce : consumers) {
    ASSERT_EQ(ce.events.size(), 1u) << ce.consumer;
    EXPECT_EQ(ce.events[0].flags, 0x0100) << "EVENT_HEADER_FLAG_CLASSIC_HEADER";
    if (ce.consumer == "ca") {
      EXPECT_EQ(ce.events[0].seq, classic::kFirstSequence);
      EXPECT_EQ(ce.events[0].def.opcode, 10);
      EXPECT_EQ(ce.events[0].def.id, 0);
      EXPECT_TRUE(ce.excluded.count(classic::kFirstSequence + 1));
    } else {
      EXPECT_EQ(ce.events[0].seq, classic::kFirstSequence + 1);
      EXPECT_EQ(ce.events[0].def.level, 2);
      EXPECT_TRUE(ce.excluded.count(classic::kFirstSequence));
    }
  }
}

TEST(ClassicOracle, HeaderChecksAndLevels) {
  const Case c = one_case(R"([
    {"op": "register_classic", "provider": "p"},
    {"op": "start", "session": "a"},
    {"op": "enable", "session": "a", "provider": "p", "level": 3, "match_any": "0x1", "api": "EnableTrace"},
    {"op": "trace_event", "provider": "p", "level": 1, "size": 4023},
    {"op": "trace_event", "provider": "p", "level": 1, "size": 4024},
    {"op": "trace_event", "provider": "p", "level": 1, "flags": "0x0"},
    {"op": "trace_event", "provider": "p", "level": 1, "mof_fields": 17},
    {"op": "trace_event", "provider": "p", "level": 4, "only_enabled": true, "count": 3},
    {"op": "trace_event", "provider": "p", "level": 3, "only_enabled": true},
    {"op": "trace_message", "provider": "p", "number": 9}])",
                          R"({"a": {"buffer_size_kb": 4}, "b": {}})");
  const std::vector<oracle::StepExpectation> e = oracle::expect_case(c);
  EXPECT_EQ(e[3].status, std::optional<std::uint32_t>(0));
  EXPECT_TRUE(e[4].status_nonzero);
  EXPECT_EQ(e[4].status_rule, "HDR-SIZE");
  EXPECT_EQ(e[5].status, std::optional<std::uint32_t>(186));  // ERROR_INVALID_FLAG_NUMBER
  EXPECT_EQ(e[5].status_rule, "HDR-FLAGS");
  EXPECT_TRUE(e[6].status_nonzero);
  EXPECT_EQ(e[6].status_rule, "HDR-FLAGS");
  EXPECT_EQ(e[7].classic.skipped, 3u);  // level 4 is not included in level 3
  EXPECT_EQ(e[8].classic.skipped, 0u);
  EXPECT_EQ(e[9].status, std::optional<std::uint32_t>(0));
}

TEST(ClassicOracle, LoaderRejectsBadClassicFields) {
  EXPECT_THROW(one_case(R"([{"op": "trace_event", "provider": "p", "mof_fields": 1}])"),
               InputError);
  EXPECT_THROW(one_case(R"([{"op": "trace_event", "provider": "p", "colour": 1}])"), InputError);
  EXPECT_THROW(one_case(R"([{"op": "trace_event", "provider": "q"}])"), InputError);
  EXPECT_THROW(one_case(R"([{"op": "trace_event", "provider": "p", "flags": 3}])"), InputError);
}

}  // namespace
}  // namespace etwh
