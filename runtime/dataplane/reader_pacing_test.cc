// ReaderPacing (etwrt/reader_pacing.h): its decisions against a fake clock, then its effect on
// a real writer: a dense stream costs the writer at most one wake-up system call per
// kWakeIntervalNs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "dataplane_layout.h"
#include "etwrt/dataplane.h"
#include "etwrt/reader_pacing.h"

namespace etwrt::dataplane {
namespace {

using P = ReaderPacing;

// Records what the pacing asked of the reader; the clock moves 100 ns per reading unless a
// call moves it.
struct FakeWaiter {
  std::uint64_t ns = 1'000'000'000;
  int prepared = 0, cancelled = 0, waits = 0, naps = 0;
  bool wake_early = true;    // wait() returns woken after 10 us, else times out
  std::uint64_t napped = 0;  // the last nap's length
  std::uint32_t prepare_wait() { return static_cast<std::uint32_t>(++prepared); }
  bool woken_before_cancel = false;  // cancel_wait() finds a writer's wake-up made
  bool cancel_wait(std::uint32_t) {
    ++cancelled;
    return woken_before_cancel;
  }
  bool wait(std::uint32_t, std::uint64_t timeout_ns) {
    ++waits;
    ns += wake_early ? 10'000 : timeout_ns;
    return wake_early;
  }
  void nap(std::uint64_t timeout_ns) {
    ++naps;
    napped = timeout_ns;
    ns += timeout_ns;
  }
  auto clock() {
    return [this] { return ns += 100; };
  }
};

TEST(ReaderPacing, ThinPollBacksOffWithoutTouchingTheReader) {
  P pacing;
  FakeWaiter w;
  const std::uint64_t before = w.ns;
  pacing.after_poll(w, P::kThinPoll - 1, w.clock());
  EXPECT_GE(w.ns - before, P::kBackOffNs);
  EXPECT_EQ(w.prepared + w.cancelled + w.waits + w.naps, 0);
}

TEST(ReaderPacing, FullPollPollsAgainAtOnce) {
  P pacing;
  FakeWaiter w;
  const std::uint64_t before = w.ns;
  pacing.after_poll(w, P::kThinPoll, w.clock());
  EXPECT_LT(w.ns - before, P::kBackOffNs);
  EXPECT_EQ(w.prepared + w.cancelled + w.waits + w.naps, 0);
}

// Empty polls: spin for kSpinNs, announce, then sleep after one more empty poll.
int polls_until_announced(P& pacing, FakeWaiter& w) {
  int polls = 0;
  const int prepared = w.prepared;
  while (w.prepared == prepared && polls < 1'000'000) {
    pacing.after_poll(w, 0, w.clock());
    ++polls;
  }
  return polls;
}

TEST(ReaderPacing, EmptyPollsSpinThenAnnounceThenSleep) {
  P pacing;
  FakeWaiter w;
  const std::uint64_t start = w.ns;
  ASSERT_GT(polls_until_announced(pacing, w), 1);
  EXPECT_GE(w.ns - start, P::kSpinNs);
  EXPECT_EQ(w.waits, 0);
  pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.waits, 1);
  EXPECT_EQ(w.naps, 0);
}

TEST(ReaderPacing, RecordsAfterTheAnnouncementCancelIt) {
  P pacing;
  FakeWaiter w;
  polls_until_announced(pacing, w);
  pacing.after_poll(w, P::kThinPoll, w.clock());
  EXPECT_EQ(w.cancelled, 1);
  pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.waits, 0);  // A fresh spin, not the cancelled sleep.
}

// A writer that saw the announcement before the poll that cancelled it made its wake-up all
// the same: the reader naps for the interval from there, as if it had slept and been woken,
// so that announcements racing with records cost writers no more than one wake-up per interval.
TEST(ReaderPacing, AWakeUpMadeBeforeTheCancelStartsTheInterval) {
  P pacing;
  FakeWaiter w;
  w.woken_before_cancel = true;
  polls_until_announced(pacing, w);
  pacing.after_poll(w, P::kThinPoll, w.clock());
  ASSERT_EQ(w.cancelled, 1);
  const int prepared = w.prepared;
  pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.naps, 1);
  EXPECT_EQ(w.prepared, prepared);  // no announcement within the interval
}

// Woken by a writer: for kWakeIntervalNs, empty polls nap (unannounced, no spin); then the
// reader announces again.
TEST(ReaderPacing, WokenReaderNapsUntilTheIntervalEnds) {
  P pacing;
  FakeWaiter w;
  polls_until_announced(pacing, w);
  pacing.after_poll(w, 0, w.clock());
  ASSERT_EQ(w.waits, 1);
  const std::uint64_t woken = w.ns;
  const int prepared = w.prepared;
  pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.naps, 1);
  EXPECT_EQ(w.napped, P::kNapNs);
  while (w.ns - woken < P::kWakeIntervalNs) pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.prepared, prepared);  // No announcement within the interval.
  EXPECT_GE(w.naps, static_cast<int>(P::kWakeIntervalNs / P::kNapNs) - 1);
  polls_until_announced(pacing, w);
  EXPECT_EQ(w.prepared, prepared + 1);
}

TEST(ReaderPacing, TimedOutSleepIsNotAWakeUp) {
  P pacing;
  FakeWaiter w;
  w.wake_early = false;
  polls_until_announced(pacing, w);
  pacing.after_poll(w, 0, w.clock());
  ASSERT_EQ(w.waits, 1);
  pacing.after_poll(w, 0, w.clock());
  EXPECT_EQ(w.naps, 0);
}

// A real writer commits one record every ~30 us for 200 ms; a reader thread paced by
// ReaderPacing gets them all, and the writers' wake-ups (each bumps wake_seq) stay within one
// per kWakeIntervalNs. Woken per record instead (no naps), it would be one per record.
TEST(ReaderPacing, DenseStreamCostsWritersAtMostOneWakeUpPerInterval) {
  Pool pool = Pool::create(PoolConfig{}, "etwrt-pacing-test");
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> delivered{0};
  std::thread consumer([&] {
    ReaderOptions options;
    options.eager_partial = true;  // as the hub reads
    Reader reader(pool, options);
    P pacing;
    const auto clock = [&pool] { return pool.now_ns(); };
    const auto count = [&](const RecordView&) { delivered.fetch_add(1); };
    while (!done.load()) pacing.after_poll(reader, reader.poll(count), clock);
    while (reader.poll(count, true) != 0) {
    }
  });
  Writer writer(pool);
  static constexpr GUID kProvider{0x5ace, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
  static constexpr EVENT_DESCRIPTOR kDescriptor{1, 0, 0, 4, 0, 0, 0};
  std::uint64_t written = 0;
  const std::uint32_t wakes_before = pool.shared()->session[0].wake_seq.load();
  const auto start = std::chrono::steady_clock::now();
  // Gaps longer than the spin, so that an unpaced reader would sleep before each record;
  // busy-waited, as a sleep's timer slack would make them several times longer.
  auto next = start;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200)) {
    next += std::chrono::microseconds(30);
    while (std::chrono::steady_clock::now() < next) {
    }
    const std::uint64_t payload = written;
    EVENT_DATA_DESCRIPTOR data{};
    EventDataDescCreate(&data, &payload, sizeof payload);
    EventInput in;
    in.provider_id = &kProvider;
    in.descriptor = &kDescriptor;
    in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, 1);
    ASSERT_EQ(writer.write(in), WriteResult::written);
    ++written;
  }
  const std::uint32_t wakes = pool.shared()->session[0].wake_seq.load() - wakes_before;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  writer.release();
  done = true;
  pool.wake_reader();
  consumer.join();
  EXPECT_EQ(delivered.load(), written);
  // Dense: several records per interval, else the bound below would not tell pacing apart.
  ASSERT_GE(written, 4u * static_cast<std::uint64_t>(ms + 2));
  EXPECT_LE(wakes, static_cast<std::uint32_t>(ms) + 2) << written << " records in " << ms << " ms";
}

}  // namespace
}  // namespace etwrt::dataplane
