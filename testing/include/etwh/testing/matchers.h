// etwh::testing's gMock matchers over captured events (header-only; link GTest::gmock). They
// check what expect.h checks, and on failure print, as gMock does, what was expected beside what
// was received: every received event with what differs from the expectation.
//
//   using namespace etwh::testing;
//   EXPECT_THAT(result, CaptureOk());
//   EXPECT_THAT(result.events, ContainsEvent(EventSpec().named("Started").field_eq("Port", "80")));
//   EXPECT_THAT(result.events, Contains(EventNamed("Started")));  // gMock's Contains works too
//   EXPECT_THAT(result.events, EventsInOrder({EventSpec().named("Open"),
//                                             EventSpec().named("Close")}));
#pragma once

#include "etwh/testing/capture.h"
#include "etwh/testing/expect.h"

#include <gmock/gmock.h>

#include <ostream>
#include <string>
#include <vector>

namespace etwh::testing {

// gTest prints a received event as describe() does.
inline void PrintTo(const Event& e, std::ostream* os) { *os << describe(e); }
// ... and a capture as its events and sessions, not its bytes.
inline void PrintTo(const CaptureResult& r, std::ostream* os) {
  *os << "a capture of " << r.events.size() << " events from " << r.sessions.size() << " sessions";
  for (const SessionAccount& a : r.sessions) {
    *os << "; " << a.name << ": " << a.delivered << " delivered, " << a.lost << " lost, "
        << a.buffers_lost << " buffers lost";
  }
  if (!r.errors.empty()) *os << "; " << r.errors.size() << " errors";
}

namespace matchers_internal {

class EventMatcher : public ::testing::MatcherInterface<const Event&> {
 public:
  explicit EventMatcher(EventSpec spec) : spec_(std::move(spec)) {}
  bool MatchAndExplain(const Event& e, ::testing::MatchResultListener* listener) const override {
    const std::string diff = spec_.mismatch(e);
    if (!diff.empty()) *listener << "which differs: " << diff;
    return diff.empty();
  }
  void DescribeTo(std::ostream* os) const override { *os << "is " << spec_.describe(); }
  void DescribeNegationTo(std::ostream* os) const override { *os << "is not " << spec_.describe(); }

 private:
  EventSpec spec_;
};

// A check of expect.h over the whole list, as a matcher.
template <typename Check>
class EventsMatcher : public ::testing::MatcherInterface<const std::vector<Event>&> {
 public:
  EventsMatcher(Check check, std::string description)
      : check_(std::move(check)), description_(std::move(description)) {}
  bool MatchAndExplain(const std::vector<Event>& events,
                       ::testing::MatchResultListener* listener) const override {
    const Verdict v = check_(events);
    if (!v.ok) *listener << "\n" << v.message;
    return v.ok;
  }
  void DescribeTo(std::ostream* os) const override { *os << description_; }

 private:
  Check check_;
  std::string description_;
};

template <typename Check>
::testing::Matcher<const std::vector<Event>&> events_matcher(Check check, std::string text) {
  return ::testing::MakeMatcher(new EventsMatcher<Check>(std::move(check), std::move(text)));
}

class CaptureOkMatcher : public ::testing::MatcherInterface<const CaptureResult&> {
 public:
  bool MatchAndExplain(const CaptureResult& r,
                       ::testing::MatchResultListener* listener) const override {
    if (!r.ok()) *listener << "\n" << r.problems();
    return r.ok();
  }
  void DescribeTo(std::ostream* os) const override {
    *os << "is a capture with no error and no lost event";
  }
};

}  // namespace matchers_internal

// An event as `spec` describes it.
//
//   EXPECT_THAT(result.events[0], IsEvent(EventSpec().named("Started").level(4)));
inline ::testing::Matcher<const Event&> IsEvent(EventSpec spec) {
  return ::testing::MakeMatcher(new matchers_internal::EventMatcher(std::move(spec)));
}

// An event with this name (TraceLogging's, or the manifest's through TDH).
//
//   EXPECT_THAT(result.events, Contains(EventNamed("Started")));
inline ::testing::Matcher<const Event&> EventNamed(std::string name) {
  return IsEvent(EventSpec().named(std::move(name)));
}

// An event whose field `name` is `value` (the value as text: capture.h's Field).
//
//   EXPECT_THAT(result.events, Contains(FieldEq("Port", "8080")));
inline ::testing::Matcher<const Event&> FieldEq(std::string name, std::string value) {
  return IsEvent(EventSpec().field_eq(std::move(name), std::move(value)));
}

// An event whose field `name` matches `regex` (RE2 syntax, searched).
//
//   EXPECT_THAT(result.events, Contains(FieldMatches("Path", "^/tmp/")));
inline ::testing::Matcher<const Event&> FieldMatches(std::string name, std::string regex) {
  return IsEvent(EventSpec().field_matches(std::move(name), std::move(regex)));
}

// An event of this level.
//
//   EXPECT_THAT(result.events, Each(LevelIs(TRACE_LEVEL_INFORMATION)));
inline ::testing::Matcher<const Event&> LevelIs(UCHAR level) {
  return IsEvent(EventSpec().level(level));
}

// An event whose keyword has every bit of `mask`.
//
//   EXPECT_THAT(result.events, Each(KeywordsInclude(0x2)));
inline ::testing::Matcher<const Event&> KeywordsInclude(ULONGLONG mask) {
  return IsEvent(EventSpec().keywords(mask));
}

// Some event matches `spec`; on failure every received event is listed with what differs.
//
//   EXPECT_THAT(result.events, ContainsEvent(EventSpec().named("Started")));
inline ::testing::Matcher<const std::vector<Event>&> ContainsEvent(EventSpec spec) {
  std::string text = "contains " + spec.describe();
  return matchers_internal::events_matcher(
      [spec](const std::vector<Event>& e) { return contains(e, spec); }, std::move(text));
}

// Events matching `specs`, in this order (others may come between).
//
//   EXPECT_THAT(result.events, EventsInOrder({EventSpec().named("Open"),
//                                             EventSpec().named("Close")}));
inline ::testing::Matcher<const std::vector<Event>&> EventsInOrder(std::vector<EventSpec> specs) {
  std::string text = "contains, in order:";
  for (const EventSpec& s : specs) text += "\n    " + s.describe();
  return matchers_internal::events_matcher(
      [specs](const std::vector<Event>& e) { return in_order(e, specs); }, std::move(text));
}

// Exactly `n` events match `spec`.
//
//   EXPECT_THAT(result.events, EventCount(EventSpec().level(TRACE_LEVEL_VERBOSE), 0));
inline ::testing::Matcher<const std::vector<Event>&> EventCount(EventSpec spec, std::size_t n) {
  std::string text = "contains exactly " + std::to_string(n) + " x " + spec.describe();
  return matchers_internal::events_matcher(
      [spec, n](const std::vector<Event>& e) { return count(e, spec, n); }, std::move(text));
}

// The capture had no error and, unless its options allowed it, lost no event.
//
//   ASSERT_THAT(result, CaptureOk());
inline ::testing::Matcher<const CaptureResult&> CaptureOk() {
  return ::testing::MakeMatcher(new matchers_internal::CaptureOkMatcher());
}

}  // namespace etwh::testing
