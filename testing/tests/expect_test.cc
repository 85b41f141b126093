// The expectations (expect.h) and their gMock matchers, on events made by hand.
#include "etwh/testing/expect.h"
#include "etwh/testing/matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace etwh::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Event event(std::string name, UCHAR level, ULONGLONG keyword, std::string port) {
  Event e;
  e.name = std::move(name);
  e.level = level;
  e.keyword = keyword;
  e.fields = {{"Port", std::move(port)}};
  return e;
}

const std::vector<Event> kEvents = {event("Open", 4, 0x1, "80"), event("Read", 5, 0x3, "80"),
                                    event("Close", 4, 0x1, "81")};

TEST(TestingEventSpec, MatchesEachAttribute) {
  EXPECT_TRUE(
      EventSpec().named("Read").level(5).keywords(0x2).field_eq("Port", "80").matches(kEvents[1]));
  EXPECT_FALSE(EventSpec().named("Read").matches(kEvents[0]));
  EXPECT_FALSE(EventSpec().level(4).matches(kEvents[1]));
  EXPECT_FALSE(EventSpec().keywords(0x2).matches(kEvents[0]));
  EXPECT_FALSE(EventSpec().field_eq("Port", "81").matches(kEvents[0]));
  EXPECT_FALSE(EventSpec().field_eq("Host", "x").matches(kEvents[0]));
  EXPECT_TRUE(EventSpec().field_matches("Port", "^8[01]$").matches(kEvents[2]));
  EXPECT_FALSE(EventSpec().field_matches("Port", "^9").matches(kEvents[2]));
  EXPECT_FALSE(EventSpec().field_matches("Port", "(").matches(kEvents[2]));  // a bad regex
}

TEST(TestingEventSpec, MismatchPutsExpectedBesideReceived) {
  EXPECT_EQ(EventSpec().named("Read").field_eq("Port", "81").mismatch(kEvents[0]),
            "name: expected \"Read\" | received \"Open\"; "
            "field Port: expected \"81\" | received \"80\"");
}

TEST(TestingVerdicts, ContainsInOrderAndCount) {
  EXPECT_TRUE(contains(kEvents, EventSpec().named("Close")).ok);
  const Verdict missing = contains(kEvents, EventSpec().named("Write"));
  EXPECT_FALSE(missing.ok);
  EXPECT_THAT(missing.message, HasSubstr("#1 \"Read\""));
  EXPECT_THAT(missing.message, HasSubstr("name: expected \"Write\" | received \"Read\""));

  EXPECT_TRUE(in_order(kEvents, {EventSpec().named("Open"), EventSpec().named("Close")}).ok);
  const Verdict reversed =
      in_order(kEvents, {EventSpec().named("Close"), EventSpec().named("Open")});
  EXPECT_FALSE(reversed.ok);
  EXPECT_THAT(reversed.message, HasSubstr("(MISSING) an event named \"Open\""));

  EXPECT_TRUE(count(kEvents, EventSpec().level(4), 2).ok);
  EXPECT_FALSE(count(kEvents, EventSpec().level(4), 1).ok);
}

TEST(TestingMatchers, AcceptAndRejectWithTheDifference) {
  EXPECT_THAT(kEvents, ContainsEvent(EventSpec().named("Read")));
  EXPECT_THAT(kEvents, Not(ContainsEvent(EventSpec().named("Write"))));
  EXPECT_THAT(kEvents, ::testing::Contains(EventNamed("Open")));
  EXPECT_THAT(kEvents, ::testing::Contains(FieldEq("Port", "81")));
  EXPECT_THAT(kEvents, ::testing::Each(KeywordsInclude(0x1)));
  EXPECT_THAT(kEvents[1], LevelIs(5));
  EXPECT_THAT(kEvents, EventCount(EventSpec().named("Open"), 1));
  EXPECT_THAT(kEvents, EventsInOrder({EventSpec().named("Open"), EventSpec().named("Read")}));

  // What gMock prints when one fails: the expectation, then each received event and what
  // differs.
  ::testing::StringMatchResultListener listener;
  const ::testing::Matcher<const std::vector<Event>&> m =
      ContainsEvent(EventSpec().named("Read").field_eq("Port", "81"));
  EXPECT_FALSE(m.MatchAndExplain(kEvents, &listener));
  EXPECT_THAT(::testing::DescribeMatcher<const std::vector<Event>&>(m),
              HasSubstr("contains an event named \"Read\", field Port = \"81\""));
  EXPECT_THAT(listener.str(), HasSubstr("differs: field Port: expected \"81\" | received \"80\""));
}

TEST(TestingMatchers, CaptureOkNamesTheLoss) {
  CaptureResult r;
  r.sessions.push_back({"s0", 10, 2, 0, 0});
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::Matcher<const CaptureResult&>(CaptureOk()).MatchAndExplain(r, &listener));
  EXPECT_THAT(listener.str(), HasSubstr("session s0 lost 2 events"));
  r.allow_loss = true;
  EXPECT_THAT(r, CaptureOk());
  // gMock prints the capture by its sessions, not its bytes.
  EXPECT_EQ(::testing::PrintToString(r),
            "a capture of 0 events from 1 sessions; s0: 10 delivered, 2 lost, 0 buffers lost");
}

}  // namespace
}  // namespace etwh::testing
