// etwh::testing's expectations on captured events, without GoogleTest: describe the event you
// expect (EventSpec), then ask whether the capture holds it, in order, or so many times. Each
// answer is data (Verdict) whose message puts what was expected beside what was received.
// With GoogleTest, matchers.h wraps the same checks as gMock matchers.
//
//   using etwh::testing::EventSpec;
//   etwh::testing::Verdict v = etwh::testing::contains(
//       result.events, EventSpec().named("Started").field_eq("Port", "8080"));
//   if (!v.ok) std::cerr << v.message;
#pragma once

#include "etwh/testing/capture.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace etwh::testing {

// What an expected event looks like; every attribute left unset matches anything.
//
//   EventSpec started = EventSpec().named("Started").level(TRACE_LEVEL_INFORMATION)
//                           .keywords(0x1).field_eq("Port", "8080")
//                           .field_matches("Host", "^[a-z.]+$");
class EventSpec {
 public:
  EventSpec& named(std::string name);
  EventSpec& id(USHORT id);
  EventSpec& level(UCHAR level);
  // Every bit of `mask` is set in the event's keyword.
  EventSpec& keywords(ULONGLONG mask);
  EventSpec& field_eq(std::string field, std::string value);
  // The field's value matches `regex`, searched (etwh/pattern.h: RE2 syntax, linear time).
  EventSpec& field_matches(std::string field, std::string regex);

  // "an event named "Started", level 4, field Port = "8080"".
  std::string describe() const;
  // What differs, one "attribute: expected X | received Y" per attribute, joined by "; ";
  // empty when `e` matches.
  std::string mismatch(const Event& e) const;
  bool matches(const Event& e) const { return mismatch(e).empty(); }

 private:
  std::optional<std::string> name_;
  std::optional<USHORT> id_;
  std::optional<UCHAR> level_;
  ULONGLONG keywords_ = 0;
  std::vector<std::pair<std::string, std::string>> equal_;
  std::vector<std::pair<std::string, std::string>> matching_;
};

// One line about a received event: name, descriptor, PID/TID and fields.
//
//   std::cout << etwh::testing::describe(result.events[0]);
//   // "Started" id 0 v0 channel 11 level 4 opcode 0 task 0 keyword 0x1 pid 12 tid 12 {Port=8080}
std::string describe(const Event& e);

// An answer: ok, or why not, with what was expected beside what was received.
struct Verdict {
  bool ok = false;
  std::string message;
};

// Some event matches `spec`. The message lists every received event with what differs.
//
//   EXPECT_TRUE(contains(result.events, EventSpec().named("Started")).ok);
Verdict contains(const std::vector<Event>& events, const EventSpec& spec);

// Events matching `specs` appear in this order (others may come between).
//
//   in_order(result.events, {EventSpec().named("Opened"), EventSpec().named("Closed")});
Verdict in_order(const std::vector<Event>& events, const std::vector<EventSpec>& specs);

// Exactly `n` events match `spec`.
//
//   count(result.events, EventSpec().level(TRACE_LEVEL_ERROR), 0);
Verdict count(const std::vector<Event>& events, const EventSpec& spec, std::size_t n);

}  // namespace etwh::testing
