#include "enable_table.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <thread>

namespace etwrt {
namespace {

TEST(SessionAccepts, Level) {
  const SessionFilter s{3, 0, 0, 0};
  EXPECT_TRUE(session_accepts(s, 0, 0));
  EXPECT_TRUE(session_accepts(s, 3, 0));
  EXPECT_FALSE(session_accepts(s, 4, 0));
}

TEST(SessionAccepts, Keywords) {
  const SessionFilter s{5, 0x0f, 0x03, 0};
  EXPECT_TRUE(session_accepts(s, 1, 0x03));
  EXPECT_TRUE(session_accepts(s, 1, 0x07));
  EXPECT_FALSE(session_accepts(s, 1, 0x01));  // Misses a MatchAll bit.
  EXPECT_FALSE(session_accepts(s, 1, 0x30));  // No MatchAny bit.
  EXPECT_TRUE(session_accepts(s, 1, 0));      // Keyword 0 events pass.
}

TEST(SessionAccepts, AnyZeroAcceptsEveryKeyword) {
  const SessionFilter s{5, 0, 0xff, 0};
  EXPECT_TRUE(session_accepts(s, 1, 0x100));
}

TEST(SessionAccepts, IgnoreKeyword0) {
  const SessionFilter s{5, 0x0f, 0, EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0};
  EXPECT_FALSE(session_accepts(s, 1, 0));
  EXPECT_TRUE(session_accepts(s, 1, 1));
}

TEST(EnableTable, EmptyAcceptsNothing) {
  EnableTable t;
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.accepts(0, 0));
}

TEST(EnableTable, SomeSessionAccepts) {
  EnableTable t;
  const SessionFilter f[2] = {{2, 0x1, 0, 0}, {5, 0x2, 0, 0}};
  t.publish(f, 2);
  EXPECT_TRUE(t.accepts(2, 0x1));
  EXPECT_FALSE(t.accepts(3, 0x1));  // Only the level-2 session wants keyword 1.
  EXPECT_TRUE(t.accepts(5, 0x2));
  t.publish(nullptr, 0);
  EXPECT_FALSE(t.accepts(2, 0x1));
}

// Neither table accepts (9, 2) but a slot torn between them (level of one, keyword of the
// other) would: a reader that ever says yes saw a torn table.
TEST(EnableTable, ConcurrentReadersNeverSeeATornTable) {
  EnableTable t;
  SessionFilter high_level[8];
  SessionFilter keyword_two[8];
  for (int i = 0; i < 8; ++i) {
    high_level[i] = {9, 0x1, 0, 0};
    keyword_two[i] = {0, 0x2, 0, 0};
  }
  t.publish(high_level, 8);
  std::atomic<bool> stop{false};
  std::atomic<long> torn{0};
  std::atomic<long> reads{0};
  std::thread reader([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (t.accepts(9, 0x2)) ++torn;
      ++reads;
    }
  });
  for (int i = 0; i < 200000 || reads.load() < 1000; ++i) {
    t.publish(i % 2 ? keyword_two : high_level, 8);
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
}

TEST(EnableTable, CollectGivesEachAcceptingSessionsSinkAndSlot) {
  EnableTable t;
  int a = 0, b = 0, c = 0;
  SessionFilter f[3];
  f[0] = {3, 0x1, 0, 0, &a, 0};
  f[1] = {5, 0x2, 0, 0, &b, 4};
  f[2] = {5, 0, 0, 0, &c, 7};
  std::array<Target, kMaxSessionsPerProvider> out;
  EXPECT_EQ(t.collect(1, 0x1, out), 0u);  // Nothing published.
  t.publish(f, 3);
  ASSERT_EQ(t.collect(4, 0x2, out), 2u);
  EXPECT_EQ(out[0].sink, &b);
  EXPECT_EQ(out[0].slot, 4);
  EXPECT_EQ(out[1].sink, &c);
  EXPECT_EQ(out[1].slot, 7);
  ASSERT_EQ(t.collect(2, 0x1, out), 2u);
  EXPECT_EQ(out[0].sink, &a);
  EXPECT_EQ(out[1].sink, &c);
  EXPECT_EQ(t.collect(6, 0x1, out), 0u);
}

}  // namespace
}  // namespace etwrt
