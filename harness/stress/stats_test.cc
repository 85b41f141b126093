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

namespace etwh::stress {
namespace {

TEST(LatencyHistogram, BucketsRoundTripAndMergeLikeTheRuns) {
  LatencyHistogram a, b, both;
  for (std::uint64_t v : {10ull, 500ull, 20000ull, 20100ull, 7000000ull}) {
    a.record(v);
    both.record(v);
  }
  for (std::uint64_t v : {64ull, 20050ull, 9000000ull}) {
    b.record(v);
    both.record(v);
  }
  LatencyHistogram a2, b2;
  ASSERT_TRUE(LatencyHistogram::from_buckets(a.nonempty_buckets(), a.max(), a2));
  ASSERT_TRUE(LatencyHistogram::from_buckets(b.nonempty_buckets(), b.max(), b2));
  a2.merge(b2);
  EXPECT_EQ(a2.count(), both.count());
  EXPECT_EQ(a2.max(), both.max());
  for (double q : {0.1, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a2.percentile(q), both.percentile(q)) << q;
  ASSERT_EQ(a.nonempty_buckets().size(), 4u);  // 20000 and 20100 share a bucket
  EXPECT_EQ(a.nonempty_buckets()[2].count, 2u);
  EXPECT_EQ(LatencyHistogram::bucket_lower(a.nonempty_buckets()[2].index), 19968u);
}

TEST(WriterSamples, WrittenAtInterpolatesBetweenSamples) {
  WriterSamples w;
  w.start_ns = 1000;
  w.step_ns = 100;
  w.samples = {10, 30, 35};  // at 1100, 1200, 1300
  w.end_ns = 1250;           // the last write: the sample at 1300 came after it
  w.total = 40;
  EXPECT_EQ(written_at(w, 900), 0.0);
  EXPECT_EQ(written_at(w, 1050), 5.0);  // (1000, 0) .. (1100, 10)
  EXPECT_EQ(written_at(w, 1100), 10.0);
  EXPECT_EQ(written_at(w, 1150), 20.0);  // (1100, 10) .. (1200, 30)
  EXPECT_EQ(written_at(w, 1225), 35.0);  // (1200, 30) .. (1250, 40)
  EXPECT_EQ(written_at(w, 1250), 40.0);
  EXPECT_EQ(written_at(w, 5000), 40.0);
}

TEST(LatencyHistogram, FromBucketsRejectsWhatNoRunCouldWrite) {
  LatencyHistogram h;
  EXPECT_FALSE(LatencyHistogram::from_buckets({{LatencyHistogram::kBucketCount, 1}}, 0, h));
  // The max must fall in the last non-empty bucket.
  EXPECT_FALSE(LatencyHistogram::from_buckets({{5, 1}}, 900, h));
  EXPECT_TRUE(LatencyHistogram::from_buckets({{5, 1}}, 5, h));
  EXPECT_EQ(h.percentile(0.5), 5u);
}

TEST(LatencySplit, QuietSinceTheLaterOfWriteAndPreviousCallback) {
  // Written at 100, the consumer's previous callback at 250, this one at 400: it delivered
  // another record 150 ns after the write (behind), then nothing for 150 ns (quiet).
  LatencySplit s = split_latency(400, 250, 100);
  EXPECT_EQ(s.quiet_ns, 150u);
  EXPECT_EQ(s.behind_ns, 150u);
  // The previous callback came before the write: the whole wait was quiet.
  s = split_latency(400, 50, 100);
  EXPECT_EQ(s.quiet_ns, 300u);
  EXPECT_EQ(s.behind_ns, 0u);
  // The first callback of the thread (no previous one): quiet too.
  s = split_latency(400, 0, 100);
  EXPECT_EQ(s.quiet_ns, 300u);
  EXPECT_EQ(s.behind_ns, 0u);
  // Delivered right after the previous callback: all behind.
  s = split_latency(400, 400, 100);
  EXPECT_EQ(s.quiet_ns, 0u);
  EXPECT_EQ(s.behind_ns, 300u);
}

TEST(LatencySplit, PartsAlwaysAddUpToTheLatency) {
  for (std::uint64_t write : {0ull, 1ull, 1000ull, 5000ull}) {
    for (std::uint64_t prev : {0ull, 999ull, 1000ull, 4999ull, 5000ull, 5001ull, ~0ull}) {
      const std::uint64_t now = 5000;
      const LatencySplit s = split_latency(now, prev, write);
      EXPECT_EQ(s.quiet_ns + s.behind_ns, now - write) << write << " " << prev;
    }
  }
  // A clock inversion (callback before the write) has no latency to split.
  const LatencySplit s = split_latency(100, 50, 200);
  EXPECT_EQ(s.quiet_ns, 0u);
  EXPECT_EQ(s.behind_ns, 0u);
}

}  // namespace
}  // namespace etwh::stress
