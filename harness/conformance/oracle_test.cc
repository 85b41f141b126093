#include "harness/conformance/oracle.h"
#include "harness/conformance/families/trace_files/trace_files_ops.h"
#include "harness/conformance/test_steps.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/providers/providers_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/traits/traits_ops.h"

#include "win32_text.h"

#include <evntrace.h>
#include <gtest/gtest.h>

#include <bitset>
#include <random>

namespace etwh::oracle {
namespace {

TEST(Aggregate, EmptyIsDisabledAndZero) { EXPECT_EQ(aggregate({}), (Aggregate{false, 0, 0, 0})); }

TEST(Aggregate, LevelMaxAnyOrAllAnd) {
  const std::vector<SessionEnable> s = {{3, 0x0F, 0x03, 0}, {1, 0xF0, 0x01, 0}};
  EXPECT_EQ(aggregate(s), (Aggregate{true, 3, 0xFF, 0x01}));
}

TEST(SessionAccepts, LevelAndLevelZeroBypass) {
  const SessionEnable s{2, 0x1, 0, 0};
  EXPECT_TRUE(session_accepts(s, {2, 0x1}));
  EXPECT_FALSE(session_accepts(s, {3, 0x1}));
  EXPECT_TRUE(session_accepts(s, {0, 0x1}));  // LOG_ALWAYS
}

TEST(SessionAccepts, KeywordAnyAllAndZeroBypass) {
  const SessionEnable s{5, 0x6, 0x2, 0};
  EXPECT_TRUE(session_accepts(s, {1, 0x2}));
  EXPECT_FALSE(session_accepts(s, {1, 0x4}));  // lacks the All bit
  EXPECT_FALSE(session_accepts(s, {1, 0x8}));  // no Any bit
  EXPECT_TRUE(session_accepts(s, {1, 0x0}));   // keyword 0 bypasses
}

TEST(SessionAccepts, IgnoreKeywordZero) {
  const SessionEnable s{5, 0x6, 0, kEnablePropertyIgnoreKeyword0};
  EXPECT_FALSE(session_accepts(s, {1, 0x0}));
  EXPECT_TRUE(session_accepts(s, {1, 0x2}));
}

TEST(SessionAccepts, MatchAnyZeroTakesEverythingAndIgnoresAll) {
  const SessionEnable s{5, 0, 0xF0, 0};
  EXPECT_TRUE(session_accepts(s, {1, 0x1}));
  EXPECT_TRUE(session_accepts(s, {1, 0x8000000000000000}));
}

TEST(ProviderEventEnabled, LiteralPredicate) {
  const Aggregate a{true, 4, 0x3, 0x1};
  EXPECT_TRUE(provider_event_enabled(a, {4, 0x1}));
  EXPECT_FALSE(provider_event_enabled(a, {5, 0x1}));
  EXPECT_FALSE(provider_event_enabled(a, {4, 0x2}));
  EXPECT_TRUE(provider_event_enabled(a, {4, 0x0}));
  EXPECT_FALSE(provider_event_enabled(Aggregate{}, {0, 0}));
}

TEST(TraitsBlob, WellFormedAndEachDefect) {
  // "ab\0", a 4-byte trait (type 0x80, one data byte), a 3-byte trait with no data.
  const std::vector<std::uint8_t> ok = {12, 0, 'a', 'b', 0, 4, 0, 0x80, 0x55, 3, 0, 0x81};
  EXPECT_EQ(traits_blob_error(ok), std::nullopt);
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{4, 0, 'x', 0}), std::nullopt);
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{5, 0, 'x', 0}),
            "TraitsSize 5 differs from the blob's 4 bytes");
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{4, 0, 'x', 'y'}),
            "provider name is not NUL-terminated");
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{6, 0, 'x', 0, 9, 0}),
            "trait at offset 4 is truncated");
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{7, 0, 'x', 0, 9, 0, 0x80}),
            "trait at offset 4 overruns the blob");
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{7, 0, 'x', 0, 2, 0, 0x80}),
            "trait at offset 4 has size below 3");
  EXPECT_EQ(traits_blob_error(std::vector<std::uint8_t>{2, 0}),
            "shorter than a size and an empty name (3 bytes)");
}

// --- The randomized comparison against an independent, bit-by-bit model. ---

Aggregate brute_aggregate(const std::vector<SessionEnable>& sessions) {
  Aggregate a;
  if (sessions.empty()) return a;
  a.enabled = true;
  // Level: the largest v such that some session's level reaches v.
  for (int v = 255; v >= 0; --v) {
    bool reached = false;
    for (const auto& s : sessions) reached = reached || s.level >= v;
    if (reached) {
      a.level = static_cast<std::uint8_t>(v);
      break;
    }
  }
  std::bitset<64> any, all;
  for (int bit = 0; bit < 64; ++bit) {
    bool some = false, every = true;
    for (const auto& s : sessions) {
      const bool set = std::bitset<64>(s.match_any)[bit];
      some = some || set;
      every = every && std::bitset<64>(s.match_all)[bit];
    }
    any[bit] = some;
    all[bit] = every;
  }
  a.match_any = any.to_ullong();
  a.match_all = all.to_ullong();
  return a;
}

bool brute_accepts(const SessionEnable& s, const EventLevelKeyword& e) {
  const bool level_ok = e.level == 0 || !(e.level > s.level);
  const std::bitset<64> k(e.keyword), any(s.match_any), all(s.match_all);
  bool keyword_ok;
  if (k.none()) {
    keyword_ok = !(s.enable_property & kEnablePropertyIgnoreKeyword0);
  } else if (any.none()) {
    keyword_ok = true;
  } else {
    bool shares = false, covers = true;
    for (int bit = 0; bit < 64; ++bit) {
      shares = shares || (k[bit] && any[bit]);
      covers = covers && (!all[bit] || k[bit]);
    }
    keyword_ok = shares && covers;
  }
  return level_ok && keyword_ok;
}

TEST(OracleRandomized, AgreesWithBruteForceModel) {
  const std::uint32_t seed = 20260101;
  std::printf("OracleRandomized seed %u\n", seed);
  std::mt19937_64 rng(seed);
  // Small alphabets of bits and levels make collisions (shared bits, equal levels) frequent.
  auto keyword = [&]() -> std::uint64_t {
    switch (rng() % 4) {
      case 0: return 0;
      case 1: return rng() & 0xF;
      case 2: return (rng() & 0xF) << 60;
      default: return rng();
    }
  };
  auto level = [&]() {
    return static_cast<std::uint8_t>(rng() % 3 == 0 ? rng() % 256 : rng() % 6);
  };
  for (int round = 0; round < 5000; ++round) {
    std::vector<SessionEnable> sessions(rng() % 9);
    for (auto& s : sessions) {
      s = SessionEnable{level(), keyword(), keyword(),
                        (rng() % 4 == 0) ? kEnablePropertyIgnoreKeyword0 : 0u};
    }
    const Aggregate got = aggregate(sessions);
    ASSERT_EQ(got, brute_aggregate(sessions)) << "seed " << seed << " round " << round;
    for (int i = 0; i < 8; ++i) {
      const EventLevelKeyword ev{level(), keyword()};
      bool brute_any = false;
      for (const auto& s : sessions) {
        const bool a = session_accepts(s, ev);
        ASSERT_EQ(a, brute_accepts(s, ev)) << "seed " << seed << " round " << round;
        brute_any = brute_any || a;
      }
      ASSERT_EQ(any_session_accepts(sessions, ev), brute_any);
      // The provider-side aggregate over-approximates delivery (FLT-PER-SESSION) when every
      // session names keywords and does not drop keyword-0 events.
      bool plain = true;
      for (const auto& s : sessions) plain = plain && s.match_any != 0;
      if (plain && brute_any) {
        ASSERT_TRUE(provider_event_enabled(got, ev)) << "seed " << seed << " round " << round;
      }
    }
  }
}

// --- Replay of a case. ---

GUID guid(const char* text) { return *parse_guid(text); }

Case base_case() {
  Case c;
  c.id = "t";
  c.rules = {"CB-LEVEL-MAX"};
  c.agents = {"a", "b"};
  c.providers["p"] =
      ProviderDef{"p", "a", guid("{11111111-0000-0000-0000-000000000001}"), 0x42, true, 0};
  c.providers["q"] =
      ProviderDef{"q", "b", guid("{11111111-0000-0000-0000-000000000001}"), 0x43, true, 0};
  for (const char* s : {"s1", "s2", "s3"}) c.sessions[s] = SessionDef{s, {}, {}};
  return c;
}

Step step(std::string_view op, const std::string& session = "", const std::string& provider = "") {
  return test::make_step(op, session, provider);
}

Step enable(std::string session, std::uint8_t level, std::uint64_t any, std::uint64_t all) {
  Step s = step(ops::kEnable, session, "p");
  test::body<ControlStep>(s).level = level;
  test::body<ControlStep>(s).match_any = any;
  test::body<ControlStep>(s).match_all = all;
  return s;
}

TEST(ExpectCase, AggregatesAcrossSessionsAndRegistrations) {
  Case c = base_case();
  c.steps = {step(ops::kStart, "s1"),        step(ops::kStart, "s2"),
             step(ops::kRegister, "", "p"),  step(ops::kRegister, "", "q"),
             enable("s1", 3, 0x0F, 0x03),    enable("s2", 1, 0xF0, 0x01),
             step(ops::kDisable, "s1", "p"), step(ops::kStop, "s2")};
  const auto e = expect_case(c);
  ASSERT_EQ(e.size(), 8u);
  EXPECT_EQ(e[0].status, 0u);
  EXPECT_TRUE(e[2].callbacks.empty());
  ASSERT_EQ(e[5].callbacks.size(), 2u);  // both registrations of the GUID
  EXPECT_EQ(e[5].callbacks[0].provider, "p");
  EXPECT_EQ(e[5].callbacks[0].context, 0x42u);
  EXPECT_EQ(e[5].callbacks[1].context, 0x43u);
  EXPECT_EQ(e[5].callbacks[0].values, (Aggregate{true, 3, 0xFF, 0x01}));
  EXPECT_TRUE(e[5].callbacks[0].judge_values);
  // s1 disables, s2 remains: still enabled, recomputed over s2 alone.
  ASSERT_EQ(e[6].callbacks.size(), 2u);
  EXPECT_EQ(e[6].callbacks[0].is_enabled, 1u);
  EXPECT_EQ(e[6].callbacks[0].is_enabled_rule, "CB-ENABLED-STAYS");
  EXPECT_EQ(e[6].callbacks[0].values, (Aggregate{true, 1, 0xF0, 0x01}));
  // The last session stops: disabled.
  ASSERT_EQ(e[7].callbacks.size(), 2u);
  EXPECT_EQ(e[7].callbacks[0].is_enabled, 0u);
  EXPECT_EQ(e[7].callbacks[0].is_enabled_rule, "CB-DISABLE-LAST");
  EXPECT_FALSE(e[7].callbacks[0].judge_values);
}

TEST(ExpectCase, PreEnabledRegistrationGetsNullSourceAndNoFilter) {
  Case c = base_case();
  Step en = enable("s1", 4, 0x1, 0);
  test::body<ControlStep>(en).source_id = guid("{22222222-0000-0000-0000-000000000002}");
  test::body<ControlStep>(en).filters = {FilterDef{0x80000000, {1, 2}}};
  c.steps = {step(ops::kStart, "s1"), en, step(ops::kRegister, "", "p")};
  const auto e = expect_case(c);
  EXPECT_TRUE(e[1].callbacks.empty());
  ASSERT_EQ(e[2].callbacks.size(), 1u);
  const ExpectedCallback& cb = e[2].callbacks[0];
  EXPECT_EQ(format_guid(cb.source_id), "{00000000-0000-0000-0000-000000000000}");
  EXPECT_EQ(cb.source_rule, "CB-SOURCEID-NULL-PREENABLED");
  EXPECT_EQ(cb.filter, FilterExpect::kAbsent);
  EXPECT_EQ(cb.values, (Aggregate{true, 4, 0x1, 0}));
}

TEST(ExpectCase, SourceIdRulesByApi) {
  Case c = base_case();
  Step ex2 = enable("s1", 4, 0x1, 0);
  test::body<ControlStep>(ex2).source_id = guid("{22222222-0000-0000-0000-000000000002}");
  Step legacy = enable("s2", 4, 0x1, 0);
  test::body<ControlStep>(legacy).api = "EnableTrace";
  Step null_params = enable("s3", 4, 0x1, 0);
  c.steps = {step(ops::kStart, "s1"),
             step(ops::kStart, "s2"),
             step(ops::kStart, "s3"),
             step(ops::kRegister, "", "p"),
             ex2,
             legacy,
             null_params};
  const auto e = expect_case(c);
  EXPECT_EQ(e[4].callbacks[0].source_rule, "CB-SOURCEID");
  EXPECT_EQ(format_guid(e[4].callbacks[0].source_id), "{22222222-0000-0000-0000-000000000002}");
  EXPECT_EQ(e[5].callbacks[0].source_rule, "CB-SOURCEID-NULL-LEGACY");
  EXPECT_FALSE(e[5].callbacks[0].judge_values);
  EXPECT_EQ(e[6].callbacks[0].source_rule, "");
}

TEST(ExpectCase, NinthSessionIsRefusedAndChangesNothing) {
  Case c;
  c.id = "max";
  c.rules = {"SES-MAX-8"};
  c.agents = {"a"};
  c.providers["p"] =
      ProviderDef{"p", "a", guid("{11111111-0000-0000-0000-000000000001}"), 0, true, 0};
  c.steps.push_back(step(ops::kRegister, "", "p"));
  for (int i = 1; i <= 9; ++i) {
    const std::string s = "s" + std::to_string(i);
    c.sessions[s] = SessionDef{s, {}, {}};
    c.steps.push_back(step(ops::kStart, s));
    c.steps.push_back(enable(s, static_cast<std::uint8_t>(i), 1, 0));
  }
  const auto e = expect_case(c);
  EXPECT_EQ(e[16].status, 0u);
  EXPECT_EQ(e[16].callbacks.size(), 1u);
  EXPECT_EQ(e[18].status, std::optional<std::uint32_t>(ERROR_NO_SYSTEM_RESOURCES));
  EXPECT_EQ(e[18].status_rule, "SES-MAX-8");
  EXPECT_TRUE(e[18].callbacks.empty());
}

TEST(ExpectCase, CaptureStateKeepsAggregates) {
  Case c = base_case();
  Step cap = step(ops::kCaptureState, "s1", "p");
  test::body<ControlStep>(cap).level = 5;
  c.steps = {step(ops::kStart, "s1"), step(ops::kRegister, "", "p"), enable("s1", 2, 1, 0), cap,
             enable("s1", 2, 1, 0)};
  const auto e = expect_case(c);
  ASSERT_EQ(e[3].callbacks.size(), 1u);
  EXPECT_EQ(e[3].callbacks[0].is_enabled, 2u);
  EXPECT_EQ(e[3].callbacks[0].is_enabled_rule, "CB-CAPTURE-STATE");
  EXPECT_EQ(e[4].callbacks[0].values.level, 2);
}

TEST(ExpectCase, TraitsOnceAndMalformed) {
  Case c = base_case();
  Step good = step(ops::kSetTraits, "", "p");
  test::body<TraitsStep>(good).name = "P";
  Step bad = step(ops::kSetTraits, "", "q");
  test::body<TraitsStep>(bad).raw = true;
  test::body<TraitsStep>(bad).blob = {9, 0, 'x', 0};
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kRegister, "", "q"), good, good, bad};
  const auto e = expect_case(c);
  EXPECT_EQ(e[2].status, 0u);
  EXPECT_TRUE(e[3].status_nonzero);
  EXPECT_EQ(e[3].status_rule, "TR-SET-ONCE");
  EXPECT_TRUE(e[4].status_nonzero);
  EXPECT_EQ(e[4].status_rule, "TR-FORMAT");
}

TEST(ExpectCase, TimeoutOrderings) {
  Case c = base_case();
  c.providers.erase("q");
  c.providers["p"].delay_ms = 500;
  Step zero = enable("s1", 1, 1, 0);
  Step short_wait = enable("s1", 2, 1, 0);
  test::body<ControlStep>(short_wait).timeout_ms = 50;
  c.steps = {step(ops::kStart, "s1"), step(ops::kRegister, "", "p"), zero, short_wait};
  auto e = expect_case(c);
  EXPECT_EQ(e[2].timing, TimingExpect::kReturnsBeforeCallbackEnds);
  EXPECT_EQ(e[3].status, std::optional<std::uint32_t>(ERROR_TIMEOUT));
  c.providers["p"].delay_ms = 0;
  test::body<ControlStep>(short_wait).timeout_ms = 5000;
  c.steps[3] = short_wait;
  e = expect_case(c);
  EXPECT_EQ(e[2].timing, TimingExpect::kNone);
  EXPECT_EQ(e[3].timing, TimingExpect::kReturnsAfterCallbackEnds);
  EXPECT_EQ(e[3].status, 0u);
}

TEST(ExpectCase, AgentExitEndsRegistrationsButNotSessions) {
  Case c = base_case();
  Step q = step(ops::kQueryEnabled, "", "q");
  test::body<QueryEnabledStep>(q).level = 1;
  test::body<QueryEnabledStep>(q).keyword = 1;
  Step exit = step(ops::kExitAgent);
  test::body<AgentStep>(exit).agent = "a";
  c.steps = {step(ops::kStart, "s1"),
             step(ops::kRegister, "", "p"),
             step(ops::kRegister, "", "q"),
             enable("s1", 2, 1, 0),
             exit,
             q,
             step(ops::kStop, "s1")};
  const auto e = expect_case(c);
  EXPECT_EQ(e[3].callbacks.size(), 2u);
  EXPECT_EQ(e[5].provider_enabled, true);
  ASSERT_EQ(e[6].callbacks.size(), 1u);
  EXPECT_EQ(e[6].callbacks[0].provider, "q");
}

}  // namespace
}  // namespace etwh::oracle

// --- The data path. ---

namespace etwh::oracle {
namespace {

Step consume(std::string consumer, std::string session, std::uint64_t context = 0) {
  Step s = step(ops::kConsume, session);
  test::body<ConsumeStep>(s).consumer = std::move(consumer);
  test::body<ConsumeStep>(s).agent = "b";
  test::body<ConsumeStep>(s).context = context;
  return s;
}

Step write(std::vector<EventDef> events, bool lossy = false) {
  Step s = step(ops::kWrite, "", "p");
  test::body<WriteStep>(s).events = std::move(events);
  test::body<WriteStep>(s).lossy = lossy;
  return s;
}

EventDef ev(std::uint16_t id, std::uint8_t level, std::uint64_t keyword, std::uint32_t count = 1) {
  EventDef e;
  e.id = id;
  e.level = level;
  e.keyword = keyword;
  e.count = count;
  return e;
}

std::vector<std::uint64_t> seqs(const ConsumerExpectation& c) {
  std::vector<std::uint64_t> out;
  for (const ExpectedEvent& e : c.events) out.push_back(e.seq);
  return out;
}

TEST(ExpectData, PerSessionFiltersGiveEachConsumerItsOwnSequence) {
  Case c = base_case();
  c.rules = {"FLT-LEVEL", "FLT-KEYWORD", "FLT-PER-SESSION"};
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kStart, "s1"), step(ops::kStart, "s2"),
             step(ops::kStart, "s3"), enable("s1", 2, 0x1, 0), enable("s2", 5, 0x6, 0x2),
             consume("c1", "s1", 0x11), consume("c2", "s2"), consume("c3", "s3"),
             // seq 1-2: level 1 kw 1; 3: level 4 kw 2; 4: level 0 kw 4; 5: level 3 kw 0
             write({ev(1, 1, 0x1, 2), ev(2, 4, 0x2), ev(3, 0, 0x4), ev(4, 3, 0x0)}),
             step(ops::kCollect)};
  const auto e = expect_case(c);
  EXPECT_EQ(e[9].first_seq, (std::vector<std::uint64_t>{1, 3, 4, 5}));
  EXPECT_EQ(e[9].status, 0u);
  ASSERT_EQ(e[10].consumers.size(), 3u);
  EXPECT_EQ(e[10].collect_sessions, (std::vector<std::string>{"s1", "s2", "s3"}));
  const ConsumerExpectation& c1 = e[10].consumers[0];
  EXPECT_EQ(c1.consumer, "c1");
  EXPECT_EQ(c1.context, 0x11u);
  EXPECT_EQ(seqs(c1), (std::vector<std::uint64_t>{1, 2}));
  // Filtered out by s1 (level 4 > 2; keyword 0 passes, level 3 > 2 does not) while s2 takes
  // them: their arrival at c1 would break per-session filtering (a runtime filtering with the
  // provider's aggregate), the rule the case names for it.
  EXPECT_EQ(c1.excluded.at(3).rule, "FLT-PER-SESSION");
  EXPECT_EQ(c1.excluded.at(4).rule, "FLT-KEYWORD");  // level 0 passes, keyword 0x4 does not
  EXPECT_EQ(c1.excluded.at(5).rule, "FLT-PER-SESSION");
  // A case not about FLT-PER-SESSION blames its own filter rule.
  Case level_only = c;
  level_only.rules = {"FLT-LEVEL", "FLT-KEYWORD"};
  EXPECT_EQ(expect_case(level_only)[10].consumers[0].excluded.at(3).rule, "FLT-LEVEL");
  EXPECT_EQ(expect_case(level_only)[10].consumers[0].excluded.at(5).rule, "FLT-LEVEL");
  EXPECT_EQ(seqs(e[10].consumers[1]), (std::vector<std::uint64_t>{3, 5}));
  EXPECT_TRUE(e[10].consumers[2].events.empty());
  EXPECT_EQ(e[10].consumers[2].excluded.at(1).rule, "FLT-PER-SESSION");
  // Stopping the sessions disables the provider: its callback is expected too.
  ASSERT_FALSE(e[10].callbacks.empty());
  EXPECT_EQ(e[10].callbacks.back().is_enabled, 0u);
}

TEST(ExpectData, BufferedForTheFirstConsumerOnlyNewForTheSecond) {
  Case c = base_case();
  c.rules = {"CON-RT-BUFFERED", "CON-RT-SECOND"};
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kStart, "s1"),   enable("s1", 4, 0x1, 0),
             write({ev(1, 1, 0x1, 3)}),     consume("first", "s1"),    write({ev(2, 1, 0x1)}),
             consume("second", "s1"),       write({ev(3, 1, 0x1, 2)}), step(ops::kCollect)};
  const auto e = expect_case(c);
  ASSERT_EQ(e[8].consumers.size(), 2u);
  EXPECT_EQ(seqs(e[8].consumers[0]), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(e[8].consumers[0].events[0].rule, "CON-RT-BUFFERED");
  EXPECT_EQ(seqs(e[8].consumers[1]), (std::vector<std::uint64_t>{5, 6}));
  EXPECT_EQ(e[8].consumers[1].excluded.at(4).rule, "CON-RT-SECOND");
}

TEST(ExpectData, ReenableReplacesAndUnwantedWritesSucceed) {
  Case c = base_case();
  c.rules = {"FLT-REPLACE", "RT-WRITE-DISABLED"};
  c.steps = {step(ops::kRegister, "", "p"),
             step(ops::kStart, "s1"),
             enable("s1", 5, 0x1, 0),
             consume("c", "s1"),
             write({ev(1, 5, 0x1)}),
             enable("s1", 2, 0x2, 0),
             write({ev(1, 5, 0x1), ev(2, 2, 0x2)}),
             step(ops::kCollect)};
  const auto e = expect_case(c);
  EXPECT_EQ(e[6].event_enabled, (std::vector<std::optional<bool>>{false, true}));
  EXPECT_EQ(e[6].status, 0u);
  EXPECT_EQ(seqs(e[7].consumers[0]), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(e[7].consumers[0].excluded.at(2).rule, "FLT-REPLACE");
}

TEST(ExpectData, LossyWritesAndTraitsAreMarked) {
  Case c = base_case();
  c.rules = {"CON-SLOW", "TR-IN-EVENTS"};
  Step traits = step(ops::kSetTraits, "", "p");
  test::body<TraitsStep>(traits).name = "x";
  c.steps = {step(ops::kRegister, "", "p"),
             traits,
             step(ops::kStart, "s1"),
             enable("s1", 4, 0x1, 0),
             consume("c", "s1"),
             write({ev(1, 1, 0x1, 2)}, true),
             step(ops::kCollect)};
  const auto e = expect_case(c);
  EXPECT_FALSE(e[5].status.has_value());  // EventWrite may fail when buffers run out
  const ConsumerExpectation& ce = e[6].consumers[0];
  EXPECT_TRUE(ce.lossy);
  ASSERT_EQ(ce.events.size(), 2u);
  EXPECT_TRUE(ce.events[0].lossy);
  EXPECT_TRUE(ce.events[0].traits);
  EXPECT_EQ(ce.events[0].rule, "TR-IN-EVENTS");
}

// read_file: the file must hold what the session took (its filter applied), and the mode
// decides which rules the checks judge; the session is stopped (its provider hears of it).
TEST(ExpectTraceFiles, ReadFileExpectsTheSessionsEventsAndJudgesByMode) {
  Case c = base_case();
  c.rules = {"ETL-ACCOUNTING"};
  c.sessions["s1"].log_file = "a.etl";
  c.sessions["s1"].settings = {{"log_file_mode", 1}, {"buffer_size_kb", 8}};
  c.sessions["s2"].log_file = "b.etl";
  c.sessions["s2"].settings = {{"log_file_mode", 0x2002}, {"maximum_file_size", 16}};
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kStart, "s1"),
             step(ops::kStart, "s2"),       enable("s1", 2, 0x1, 0),
             enable("s2", 5, 0x1, 0),       write({ev(1, 1, 0x1, 2), ev(2, 4, 0x1)}),
             step("read_file", "s1"),       step("read_file", "s2"),
             step("read_file", "s2")};
  const auto e = expect_case(c);
  ASSERT_TRUE(e[6].file.has_value());
  EXPECT_EQ(e[6].file->written, (std::vector<std::uint64_t>{1, 2}));  // level 4 > 2: not taken
  EXPECT_EQ(e[6].file->buffer_size_kb, 8u);
  EXPECT_EQ(e[6].status, 0u);
  const std::set<std::string> sequential = rules_judged(e[6]);
  EXPECT_TRUE(sequential.count("ETL-ACCOUNTING"));
  EXPECT_TRUE(sequential.count("ETL-HEADER-FIRST"));
  EXPECT_FALSE(sequential.count("ETL-CIRCULAR-LOST"));
  EXPECT_FALSE(sequential.count("ETL-MAX-FILE-SIZE"));
  ASSERT_TRUE(e[7].file.has_value());
  EXPECT_EQ(e[7].file->written, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(e[7].file->maximum_file_size, 16u);
  const std::set<std::string> circular = rules_judged(e[7]);
  EXPECT_TRUE(circular.count("ETL-CIRCULAR-LOST"));
  EXPECT_TRUE(circular.count("ETL-CIRCULAR-NEWEST"));
  EXPECT_TRUE(circular.count("ETL-MAX-FILE-SIZE"));
  EXPECT_FALSE(circular.count("ETL-ACCOUNTING"));
  EXPECT_FALSE(e[8].file.has_value());  // already stopped: nothing to read
}

// The session's clock (client_context): each consumer and each read file expect the header to
// name it (1 when absent or 0); a file session that chose one has CON-CLOCK judged.
TEST(ExpectTraceFiles, TheSessionsClockIsExpectedOfItsHeaders) {
  Case c = base_case();
  c.rules = {"CON-CLOCK", "ETL-CLOCK"};
  c.sessions["s1"].log_file = "a.etl";
  c.sessions["s1"].settings = {{"log_file_mode", 1}, {"client_context", 2}};
  c.sessions["s2"].log_file = "b.etl";
  c.sessions["s2"].settings = {{"log_file_mode", 1}};
  c.sessions["s3"].settings = {{"client_context", 3}};
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kStart, "s1"), step(ops::kStart, "s2"),
             step(ops::kStart, "s3"),       consume("c3", "s3"),     step("read_file", "s1"),
             step("read_file", "s2"),       step(ops::kCollect)};
  const auto e = expect_case(c);
  ASSERT_TRUE(e[5].file.has_value());
  EXPECT_EQ(e[5].file->clock, 2u);
  EXPECT_TRUE(rules_judged(e[5]).count("CON-CLOCK"));
  ASSERT_TRUE(e[6].file.has_value());
  EXPECT_EQ(e[6].file->clock, 1u);
  EXPECT_FALSE(rules_judged(e[6]).count("CON-CLOCK"));  // no clock chosen, no raw read
  ASSERT_EQ(e[7].consumers.size(), 1u);
  EXPECT_EQ(e[7].consumers[0].clock, 3u);
}

// APPEND: the second session's file holds what the first left in it, then its own events; a
// refused combination (APPEND with CIRCULAR) is ERROR_INVALID_PARAMETER, judged by ETL-APPEND.
// NEWFILE and raw timestamps add their rules.
TEST(ExpectTraceFiles, AppendCarriesTheEarlierSessionsEventsAndRefusesCircular) {
  Case c = base_case();
  c.rules = {"ETL-APPEND"};
  for (const char* label : {"s1", "s2", "s3"}) {
    c.sessions[label].log_file = "a.etl";
    c.sessions[label].settings = {{"log_file_mode", 5}, {"buffer_size_kb", 8}};
  }
  c.sessions["s3"].settings["log_file_mode"] = 6;
  c.sessions["n"].log_file = "n%d.etl";
  c.sessions["n"].settings = {{"log_file_mode", 0x2008}, {"maximum_file_size", 16}};
  Step raw = step("read_file", "n");
  test::body<FileStep>(raw).raw_timestamp = true;
  c.steps = {step(ops::kRegister, "", "p"), step(ops::kStart, "s1"),   enable("s1", 5, 0x1, 0),
             write({ev(1, 1, 0x1, 2)}),     step(ops::kStop, "s1"),    step(ops::kStart, "s2"),
             enable("s2", 5, 0x1, 0),       write({ev(2, 1, 0x1, 3)}), step("read_file", "s2"),
             step(ops::kStart, "s3"),       step(ops::kStart, "n"),    raw};
  const auto e = expect_case(c);
  ASSERT_TRUE(e[8].file.has_value());
  EXPECT_EQ(e[8].file->written, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(rules_judged(e[8]).count("ETL-APPEND"));
  EXPECT_EQ(e[9].status, std::optional<std::uint32_t>(ERROR_INVALID_PARAMETER));
  EXPECT_EQ(e[9].status_rule, "ETL-APPEND");
  ASSERT_TRUE(e[11].file.has_value());
  EXPECT_TRUE(e[11].file->raw_timestamp);
  EXPECT_TRUE(rules_judged(e[11]).count("ETL-NEWFILE"));
  EXPECT_TRUE(rules_judged(e[11]).count("CON-CLOCK"));
  EXPECT_FALSE(rules_judged(e[11]).count("ETL-APPEND"));
}

}  // namespace
}  // namespace etwh::oracle
