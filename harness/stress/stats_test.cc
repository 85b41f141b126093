#include "stats.h"

#include <gtest/gtest.h>

namespace etwh::stress {
namespace {

TEST(LatencyHistogram, BucketsAreContiguousAndTight) {
  // Each bucket's upper bound is one below the next bucket's lower bound, and no wider than
  // 1/64 of its values.
  for (std::uint64_t v : {0ull, 1ull, 127ull, 128ull, 129ull, 1000ull, 123456789ull,
                          (1ull << 40) + 12345ull, ~0ull}) {
    const std::size_t b = LatencyHistogram::bucket_of(v);
    EXPECT_GE(LatencyHistogram::bucket_upper(b), v) << v;
    if (b > 0) {
      EXPECT_LT(LatencyHistogram::bucket_upper(b - 1), v) << v;
    }
    EXPECT_LE(LatencyHistogram::bucket_upper(b) - v, v / 64) << v;
  }
}

TEST(LatencyHistogram, Percentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  for (std::uint64_t v = 1; v <= 1000; ++v) h.record(v * 1000);  // 1..1000 us
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1000000u);
  auto near = [](std::uint64_t got, std::uint64_t want) {
    return got >= want && got <= want + want / 64;
  };
  EXPECT_TRUE(near(h.percentile(0.5), 500000)) << h.percentile(0.5);
  EXPECT_TRUE(near(h.percentile(0.99), 990000)) << h.percentile(0.99);
  EXPECT_TRUE(near(h.percentile(0.999), 999000)) << h.percentile(0.999);
  EXPECT_EQ(h.percentile(1.0), 1000000u);
  LatencyHistogram other;
  other.record(5000000);
  h.merge(other);
  EXPECT_EQ(h.max(), 5000000u);
  EXPECT_EQ(h.count(), 1001u);
}

TEST(SequenceTracker, CountsGapsMissingAndDuplicates) {
  SequenceTracker t;
  for (std::uint64_t s : {0, 1, 2, 5, 6, 6, 3, 9}) t.observe(s);
  t.finish(12);  // 10 and 11 never arrived: a final gap
  EXPECT_EQ(t.distinct(), 6u);
  EXPECT_EQ(t.duplicates(), 2u);  // the second 6, and 3 after 6
  EXPECT_EQ(t.gaps(), 3u);        // 3-4, 7-8, 10-11
  EXPECT_EQ(t.missing(), 6u);
  EXPECT_EQ(t.beyond_written(), 0u);
}

TEST(SequenceTracker, NumbersPastWhatWasWrittenAreFlagged) {
  SequenceTracker t;
  t.observe(0);
  t.observe(4);
  t.finish(3);
  EXPECT_EQ(t.beyond_written(), 2u);
}

TEST(SequenceTracker, CompleteStreamHasNoGap) {
  SequenceTracker t;
  for (std::uint64_t s = 0; s < 100; ++s) t.observe(s);
  t.finish(100);
  EXPECT_EQ(t.gaps(), 0u);
  EXPECT_EQ(t.missing(), 0u);
  EXPECT_EQ(t.distinct(), 100u);
}

}  // namespace
}  // namespace etwh::stress
