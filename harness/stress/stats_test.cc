#include "harness/stress/stats.h"

#include <array>
#include <initializer_list>
#include <random>

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

// The plain walk, one callback at a time, as the consumer did it before CallbackTimes kept the
// blocks' longest gaps: the oracle the block walk must agree with.
SilenceInWait walk_one_by_one(std::span<const std::uint64_t> ring, std::uint64_t count,
                              std::uint64_t now_ns, std::uint64_t write_ns) {
  if (now_ns < write_ns) return {};
  const std::uint64_t mask = ring.size() - 1;
  const std::uint64_t held = std::min<std::uint64_t>(count, ring.size());
  std::uint64_t longest = 0, end = now_ns;  // `end`: the later callback of the gap walked
  for (std::uint64_t back = 1; back <= held; ++back) {
    // A time after `end` cannot be (one thread, one clock): it then ends no gap.
    const std::uint64_t t = std::min(ring[(count - back) & mask], end);
    if (t <= write_ns) return {std::max(longest, end - write_ns), false};
    longest = std::max(longest, end - t);
    end = t;
  }
  // No callback at or before the write in the ring: if it held every callback of the thread,
  // there was none before and the thread was silent from the write on; else older ones were
  // overwritten and the gaps among them are unknown.
  if (count <= ring.size()) return {std::max(longest, end - write_ns), false};
  return {longest, true};
}

// A ring of 8 callback times in blocks of 2, `times` added in order (the newest last). Every
// walk is checked against the plain one on the same times.
struct CallbackRing {
  CallbackTimes<8, 2> times;
  std::array<std::uint64_t, 8> ring{};
  explicit CallbackRing(std::initializer_list<std::uint64_t> list) {
    for (std::uint64_t t : list) ring[times.count() % ring.size()] = t, times.add(t);
  }
  SilenceInWait walk(std::uint64_t now, std::uint64_t write) {
    const SilenceInWait s = times.longest_silence(now, write);
    const SilenceInWait plain = walk_one_by_one(ring, times.count(), now, write);
    EXPECT_EQ(s.ns, plain.ns) << "now " << now << ", write " << write;
    EXPECT_EQ(s.partial, plain.partial) << "now " << now << ", write " << write;
    return s;
  }
};

TEST(LongestSilence, TheLongestGapInTheWaitNotTheLast) {
  // Written at 100; callbacks at 50 (before the write), 120, 900, 905, 910 (now): the record
  // waited through the silence from 120 to 900, then came three records into the catch-up.
  CallbackRing r{50, 120, 900, 905, 910};
  const SilenceInWait s = r.walk(910, 100);
  EXPECT_EQ(s.ns, 780u);
  EXPECT_FALSE(s.partial);
  EXPECT_EQ(split_latency(910, 905, 100).quiet_ns, 5u);  // what the split alone sees
}

TEST(LongestSilence, ClippedAtTheWrite) {
  // A callback long before the write (0) and the next after it (700): the gap counts from the
  // write at 500, not from 0.
  CallbackRing r{0, 700, 710};
  EXPECT_EQ(r.walk(710, 500).ns, 200u);
  // A callback exactly at the write time ends the walk there.
  CallbackRing at{100, 500, 560, 600};
  EXPECT_EQ(at.walk(600, 500).ns, 60u);
}

TEST(LongestSilence, NoCallbackAfterTheWriteIsAllSilence) {
  // Only `now` itself after the write: silent from the write to now, like the quiet part.
  CallbackRing r{10, 20, 1000};
  const SilenceInWait s = r.walk(1000, 300);
  EXPECT_EQ(s.ns, 700u);
  EXPECT_EQ(s.ns, split_latency(1000, 20, 300).quiet_ns);
  EXPECT_FALSE(s.partial);
}

TEST(LongestSilence, TheNewestGapBeingTheLongest) {
  CallbackRing r{100, 110, 120, 130, 900};
  EXPECT_EQ(r.walk(900, 105).ns, 770u);
}

TEST(LongestSilence, EqualTimestampsAreNoSilence) {
  CallbackRing r{100, 300, 300, 300, 320};
  EXPECT_EQ(r.walk(320, 200).ns, 100u);  // 200 (write) to 300
  CallbackRing same{100, 100, 100, 100};
  EXPECT_EQ(same.walk(100, 100).ns, 0u);
}

TEST(LongestSilence, TheThreadsFirstCallbacksHaveNothingBefore) {
  // Every callback of the thread is in the ring and all came after the write: the thread was
  // silent from the write to its first callback.
  CallbackRing r{400, 410, 420};
  const SilenceInWait s = r.walk(420, 100);
  EXPECT_EQ(s.ns, 300u);
  EXPECT_FALSE(s.partial);
}

TEST(LongestSilence, ARingThatDoesNotReachTheWriteIsALowerBound) {
  // 12 callbacks through a ring of 8: the oldest 4 (including the one at 300) were overwritten,
  // and the 8 held all came after the write at 100.
  CallbackRing r{300, 310, 320, 330, 1000, 1010, 1020, 1030, 1040, 1050, 1060, 1300};
  const SilenceInWait s = r.walk(1300, 100);
  EXPECT_EQ(s.ns, 240u);  // 1060 to 1300: the longest gap among those held
  EXPECT_TRUE(s.partial);
  // The write within the ring's reach: complete again, the 1060-1300 gap the longest.
  EXPECT_FALSE(r.walk(1300, 1000).partial);
  EXPECT_EQ(r.walk(1300, 1000).ns, 240u);
}

TEST(LongestSilence, BetweenQuietAndTheLatency) {
  CallbackRing r{50, 120, 130, 500, 505, 800, 801, 900};
  for (std::uint64_t write : {0ull, 50ull, 100ull, 125ull, 130ull, 600ull, 900ull}) {
    const SilenceInWait s = r.walk(900, write);
    EXPECT_GE(s.ns, split_latency(900, 801, write).quiet_ns) << write;
    EXPECT_LE(s.ns, 900 - write) << write;
  }
  EXPECT_EQ(r.walk(100, 200).ns, 0u);  // a clock inversion: no wait
}

// Random times, in order and with inversions, through a ring of 64 in blocks of 8: every walk,
// from every callback as `now` and writes across the whole range, agrees with the plain one.
TEST(LongestSilence, BlocksGiveWhatTheWalkOneByOneGives) {
  std::mt19937_64 random(15);
  for (int round = 0; round < 40; ++round) {
    CallbackTimes<64, 8> times;
    std::array<std::uint64_t, 64> ring{};
    std::uint64_t t = 1000;
    const bool inversions = round % 4 == 3;
    for (int k = 0; k < 300; ++k) {
      // Gaps from 0 to 99, now and then a long one; with inversions, now and then a step back.
      t += random() % 8 == 0 ? 500 + random() % 5000 : random() % 100;
      if (inversions && random() % 16 == 0) t -= std::min<std::uint64_t>(t - 1, random() % 300);
      ring[times.count() % ring.size()] = t;
      times.add(t);
      for (int q = 0; q < 4; ++q) {
        const std::uint64_t write = random() % (t + 100);
        const SilenceInWait s = times.longest_silence(t, write);
        const SilenceInWait plain = walk_one_by_one(ring, times.count(), t, write);
        ASSERT_EQ(s.ns, plain.ns) << "round " << round << ", callback " << k << ", write " << write;
        ASSERT_EQ(s.partial, plain.partial) << "round " << round << ", callback " << k;
      }
    }
  }
}

TEST(ProcStatus, ReadsTheNumberOfItsKeyAlone) {
  const std::string_view status =
      "Name:\tetwh\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t 4\nVmHWM:\t   9200 "
      "kB\n";
  EXPECT_EQ(proc_status_number(status, "nonvoluntary_ctxt_switches"), 4u);
  EXPECT_EQ(proc_status_number(status, "voluntary_ctxt_switches"), 17u) << "not the longer key";
  EXPECT_EQ(proc_status_number(status, "VmHWM"), 9200u);
  EXPECT_EQ(proc_status_number(status, "ctxt_switches"), std::nullopt) << "a key is a whole name";
  EXPECT_EQ(proc_status_number(status, "Name"), std::nullopt) << "no number there";
  EXPECT_EQ(proc_status_number("nonvoluntary_ctxt_switches:\t9", "nonvoluntary_ctxt_switches"), 9u)
      << "the last line needs no newline";
}

TEST(ProcStat, StealIsTheEighthNumberOfTheCpuLine) {
  EXPECT_EQ(proc_stat_steal_ticks("cpu  252979 386 37436 286814 944 0 267 152 0 0\n"
                                  "cpu0 136484 171 18307 133792 232 0 73 78 0 0\n"),
            152u);
  EXPECT_EQ(proc_stat_steal_ticks("cpu  1 2 3 4 5 6 7 8"), 8u) << "no newline after it";
  EXPECT_EQ(proc_stat_steal_ticks("cpu  1 2 3 4 5 6 7\n"), std::nullopt) << "no steal field";
  EXPECT_EQ(proc_stat_steal_ticks("cpu0 1 2 3 4 5 6 7 8\n"), std::nullopt) << "not all CPUs";
  EXPECT_EQ(proc_stat_steal_ticks(""), std::nullopt);
}

}  // namespace
}  // namespace etwh::stress
