// Tests of sessions sharing one pool (README "Buffers shared among sessions"): each record is
// written once for the sessions that accepted it; each session's reader delivers its own
// records in order, loses only its own, and is accounted for exactly on its own.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "dataplane_layout.h"
#include "etwrt/dataplane.h"
#include "test_records.h"

namespace etwrt::dataplane {
namespace {

// Which sessions record `seq` is for: every non-empty subset of three sessions in turn.
uint32_t sessions_of(uint64_t seq) { return static_cast<uint32_t>(seq % 7) + 1; }

std::vector<uint64_t> expected_for(uint32_t session, uint64_t events) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i < events; ++i)
    if ((sessions_of(i) & (1u << session)) != 0) v.push_back(i);
  return v;
}

// The buffer's state word, for the tests that look at one buffer's masks.
uint64_t state_of(const Pool& pool, uint32_t index) {
  return pool.shared()->descs()[index].state.load();
}

TEST(DataplaneSharedSessions, EachSessionGetsItsOwnRecordsInOrder) {
  Pool pool = Pool::create(small_config(4, 2, 128), "shared-own");
  ASSERT_EQ(pool.add_session(), 1u);
  ASSERT_EQ(pool.add_session(), 2u);
  EXPECT_EQ(pool.sessions(), 0b111u);
  constexpr uint64_t kEvents = 3000;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i)
      ASSERT_EQ(write_seq(w, 1, i, sessions_of(i)), WriteResult::written);
  }
  for (uint32_t session = 0; session < 3; ++session) {
    SCOPED_TRACE("session " + std::to_string(session));
    Reader reader(pool, ReaderOptions{}, session);
    Collector col;
    drain(reader, col);
    EXPECT_EQ(col.seqs[1], expected_for(session, kEvents));
    expect_balanced(pool, expected_for(session, kEvents).size(), session);
  }
  // Each buffer went back once the last of its sessions had read it.
  const Counters c = pool.query();
  EXPECT_EQ(c.free_buffers, c.number_of_buffers);
}

TEST(DataplaneSharedSessions, ABufferIsFreeOnlyOnceEverySessionReadIt) {
  Pool pool = Pool::create(small_config(1, 2, 2), "shared-free");
  ASSERT_EQ(pool.add_session(), 1u);
  Writer w(pool);
  uint64_t seq = 0;
  while (phase_of(state_of(pool, 0)) != kFull)
    ASSERT_EQ(write_seq(w, 1, seq++, 0b11), WriteResult::written);
  EXPECT_EQ(pending_of(state_of(pool, 0)), 0b11u);
  Collector first;
  {
    Reader reader(pool, ReaderOptions{}, 0);
    reader.poll(first.callback());
  }
  EXPECT_EQ(phase_of(state_of(pool, 0)), kFull) << "session 1 has not read it";
  EXPECT_EQ(pending_of(state_of(pool, 0)), 0b10u);
  Collector second;
  {
    Reader reader(pool, ReaderOptions{}, 1);
    reader.poll(second.callback());
  }
  EXPECT_EQ(phase_of(state_of(pool, 0)), kFree);
  EXPECT_EQ(first.count, seq - 1);  // the last record started the second buffer
  EXPECT_EQ(second.seqs[1], first.seqs[1]);
}

// One session's consumer keeps up, the other's barely reads: the slow one loses old buffers,
// each loss counted and announced to it alone; the fast one loses nothing.
TEST(DataplaneSharedSessions, ASlowSessionLosesOnlyItsOwnRecords) {
  Pool pool = Pool::create(small_config(1, 2, 6), "shared-slow");
  ASSERT_EQ(pool.add_session(), 1u);
  Reader fast(pool, ReaderOptions{}, 0);
  Reader slow(pool, ReaderOptions{}, 1);
  Collector fast_got, slow_got;
  LossReport fast_reported, slow_reported;
  const auto add = [](LossReport& to) {
    return [&to](const LossReport& r) {
      to.realtime_buffers_lost += r.realtime_buffers_lost;
      to.realtime_events_lost += r.realtime_events_lost;
      to.events_lost += r.events_lost;
    };
  };
  const Reader::LossCallback fast_loss = add(fast_reported), slow_loss = add(slow_reported);
  constexpr uint64_t kEvents = 4000;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i) {
      ASSERT_EQ(write_seq(w, 1, i, 0b11), WriteResult::written) << "realtime reclaims";
      if (i % 10 == 9) fast.poll(fast_got.callback(), false, fast_loss);
      if (i % 700 == 699) slow.poll(slow_got.callback(), false, slow_loss);
    }
  }
  while (fast.poll(fast_got.callback(), true, fast_loss) +
             slow.poll(slow_got.callback(), true, slow_loss) !=
         0) {
  }
  fast.poll(fast_got.callback(), true, fast_loss);
  slow.poll(slow_got.callback(), true, slow_loss);
  const Counters f = pool.query(0), s = pool.query(1);
  EXPECT_EQ(f.realtime_events_lost, 0u);
  EXPECT_EQ(fast_got.count, kEvents);
  EXPECT_GT(s.realtime_buffers_lost, 0u);
  EXPECT_GT(s.realtime_events_lost, 0u);
  EXPECT_EQ(slow_got.count, s.events_delivered);
  slow_got.expect_per_writer_increasing();
  EXPECT_EQ(slow_got.seqs[1].back(), kEvents - 1) << "the newest events survive a reclaim";
  expect_balanced(pool, kEvents, 0);
  expect_balanced(pool, kEvents, 1);
  EXPECT_EQ(slow_reported.realtime_buffers_lost, s.realtime_buffers_lost);
  EXPECT_EQ(slow_reported.realtime_events_lost, s.realtime_events_lost);
  EXPECT_EQ(fast_reported.realtime_events_lost, 0u);
}

// A writer that found every buffer held looks again as soon as a reader lets one go, even
// when that reader's session was not the last to need it (the buffer is then reclaimable).
TEST(DataplaneSharedSessions, ABufferLetGoIsReclaimableAtOnce) {
  Pool pool = Pool::create(small_config(1, 2, 2), "shared-let-go");
  ASSERT_EQ(pool.add_session(), 1u);
  // Holds what it pins without reading it (every record is too recent for it).
  Reader reader0(pool, ReaderOptions{.eager_partial = true, .hold_back_ns = 60'000'000'000ull}, 0);
  Reader reader1(pool, ReaderOptions{}, 1);  // attached, never polls: a slow consumer
  Writer w(pool);
  const Reader::Callback ignore = [](const RecordView&) {};
  uint64_t seq = 0;
  WriteResult result = WriteResult::written;
  for (int i = 0; i < 1000 && result == WriteResult::written; ++i) {
    result = write_seq(w, 1, seq++, 0b11);
    reader0.poll(ignore);  // holds each buffer from its first record
  }
  ASSERT_EQ(result, WriteResult::lost) << "both buffers held: nothing to take";
  ASSERT_EQ(reader0.poll(ignore, true), seq - 1);  // done with both for session 0
  EXPECT_EQ(write_seq(w, 1, seq++, 0b11), WriteResult::written)
      << "session 1 alone needs them now: reclaimable";
  EXPECT_GT(pool.query(1).realtime_buffers_lost, 0u);
}

// A buffer reclaimed after its session had read part of it (its reader went, another came):
// only the records that session had not read are lost to it.
TEST(DataplaneSharedSessions, AReclaimCountsOnlyWhatTheSessionHadNotRead) {
  Pool pool = Pool::create(small_config(1, 2, 2), "shared-partial");
  ASSERT_EQ(pool.add_session(), 1u);
  Writer w(pool);
  uint64_t seq = 0;
  Collector got;
  {
    Reader first(pool, ReaderOptions{.eager_partial = true}, 1);
    for (; seq < 3; ++seq) ASSERT_EQ(write_seq(w, 1, seq, 0b10), WriteResult::written);
    ASSERT_EQ(first.poll(got.callback()), 3u);  // buffer 0, still being written
  }
  Reader second(pool, ReaderOptions{}, 1);  // attached: the slow session may lose buffers
  while (phase_of(state_of(pool, 0)) == kWriting)
    ASSERT_EQ(write_seq(w, 1, seq++, 0b10), WriteResult::written);
  const uint64_t in_first = seq - 1;  // the last record started buffer 1
  while (phase_of(state_of(pool, 1)) == kWriting)
    ASSERT_EQ(write_seq(w, 1, seq++, 0b10), WriteResult::written);  // reclaims buffer 0
  const Counters c = pool.query(1);
  EXPECT_EQ(c.realtime_buffers_lost, 1u);
  EXPECT_EQ(c.realtime_events_lost, in_first - 3) << "the 3 read before are not lost";
  w.release();
  drain(second, got);
  expect_balanced(pool, seq, 1);
}

// A session with no consumer keeps what it buffered, as a pool of its own would (a first
// consumer gets it); when the pool is full, new events are lost to every session they were
// for, counted in each.
TEST(DataplaneSharedSessions, ASessionWithoutAConsumerKeepsItsOldestEvents) {
  Pool pool = Pool::create(small_config(1, 2, 3), "shared-buffered");
  ASSERT_EQ(pool.add_session(), 1u);
  Reader reader0(pool, ReaderOptions{}, 0);
  Collector got0;
  constexpr uint64_t kEvents = 400;
  uint64_t lost = 0;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i) {
      if (write_seq(w, 1, i, 0b11) != WriteResult::written) ++lost;
      reader0.poll(got0.callback());
    }
  }
  EXPECT_GT(lost, 0u);
  drain(reader0, got0);
  Reader reader1(pool, ReaderOptions{}, 1);
  Collector got1;
  drain(reader1, got1);
  ASSERT_FALSE(got1.seqs[1].empty());
  EXPECT_EQ(got1.seqs[1].front(), 0u) << "session 1 kept its oldest events";
  EXPECT_EQ(pool.query(1).realtime_events_lost, 0u);
  EXPECT_EQ(pool.query(0).events_lost, lost);
  EXPECT_EQ(pool.query(1).events_lost, lost);
  expect_balanced(pool, kEvents, 0);
  expect_balanced(pool, kEvents, 1);
}

TEST(DataplaneSharedSessions, SessionIndexesAreGivenOnceAndRemovalFreesWhatOnlyItNeeded) {
  Pool pool = Pool::create(small_config(1, 2, 4), "shared-remove");
  for (uint32_t i = 1; i < kMaxSessions; ++i) EXPECT_EQ(pool.add_session(), i);
  EXPECT_THROW(pool.add_session(), Error);
  pool.remove_session(7);
  EXPECT_THROW(pool.add_session(), Error) << "an index is never given twice";
  EXPECT_THROW(pool.remove_session(7), Error);
  EXPECT_THROW(Reader(pool, ReaderOptions{}, 7), Error);

  Writer w(pool);
  uint64_t seq = 0;
  while (phase_of(state_of(pool, 0)) != kFull)
    ASSERT_EQ(write_seq(w, 1, seq++, 0b110), WriteResult::written);
  EXPECT_EQ(pending_of(state_of(pool, 0)), 0b110u);
  pool.remove_session(1);
  EXPECT_EQ(pending_of(state_of(pool, 0)), 0b100u);
  pool.remove_session(2);
  EXPECT_EQ(phase_of(state_of(pool, 0)), kFree) << "nobody needs it any more";
  // The buffer being written holds records for sessions 1 and 2 only: handed over, it is
  // pending for nobody and freed at once.
  w.release();
  const Counters c = pool.query();
  EXPECT_EQ(c.free_buffers, c.number_of_buffers);
}

// A pool laid out for more buffers than its first session's grows only as far as the
// sessions' MaximumBuffers add up: a session without a consumer fills its share, no more.
TEST(DataplaneSharedSessions, ThePoolGrowsToTheSumOfItsSessionsMaximumBuffers) {
  PoolConfig config = small_config(1, 1, 2);
  config.reserve_buffers = 6;
  Pool pool = Pool::create(config, "shared-growth");
  EXPECT_EQ(pool.config().maximum_buffers, 2u);
  EXPECT_EQ(pool.config().reserve_buffers, 6u);
  Writer w(pool);
  const auto allocated = [&] { return pool.shared()->allocated.load(); };
  const auto buffers_taken = [&] {
    uint64_t seq = 0;
    while (write_seq(w, 1, seq, 0b1) == WriteResult::written) ++seq;
    return allocated();
  };
  EXPECT_EQ(buffers_taken(), 2u) << "session 0's MaximumBuffers";
  ASSERT_EQ(pool.add_session(2, 3), 1u);
  EXPECT_EQ(allocated(), 4u) << "its MinimumBuffers counted at once";
  EXPECT_EQ(pool.config().maximum_buffers, 5u);
  EXPECT_EQ(buffers_taken(), 5u);
  // Each session reports its share of the pool's buffers (2 and 3 of 5).
  EXPECT_EQ(pool.query(0).number_of_buffers, 2u);
  EXPECT_EQ(pool.query(1).number_of_buffers, 3u);
  EXPECT_THROW(pool.add_session(0, 2), Error) << "the reserve has room for 1 more";
  EXPECT_EQ(pool.add_session(0, 1), 2u);
  pool.remove_session(1);
  EXPECT_EQ(pool.config().maximum_buffers, 3u);
  EXPECT_EQ(allocated(), 5u) << "counted buffers are never taken back";
  // The buffers grown for session 1 stay in the pool, yet no session reports more than its
  // MaximumBuffers (5 x 2/3 would be 3 for session 0); session 0's 2 full buffers show in use.
  Counters c0 = pool.query(0);
  EXPECT_EQ(c0.number_of_buffers, 2u);
  EXPECT_EQ(c0.number_of_buffers - c0.free_buffers, 2u);
  EXPECT_EQ(pool.query(2).number_of_buffers, 1u);
  pool.remove_session(2);
  c0 = pool.query(0);
  EXPECT_EQ(c0.number_of_buffers, 2u) << "alone in a pool of 5, still at most its 2";
  EXPECT_EQ(c0.free_buffers, 0u);
  EXPECT_THROW(Pool::create(
                   [] {
                     PoolConfig c = small_config(1, 1, 4);
                     c.reserve_buffers = 3;
                     return c;
                   }(),
                   "bad-reserve"),
               Error);
}

// The client maps a pool once per process and gives its other sessions aliases: the same
// memory, and an alias's end unmaps and closes nothing of the pool's.
TEST(DataplaneSharedSessions, AnAliasIsThePoolsMappingAndReleasesNothing) {
  Pool pool = Pool::create(small_config(4, 2, 8), "shared-alias");
  ASSERT_EQ(pool.add_session(), 1u);
  {
    Pool alias = pool.alias();
    Pool moved = std::move(alias);  // what SessionPool's constructor does with it
    EXPECT_EQ(moved.shared(), pool.shared());
    EXPECT_EQ(moved.fd(), pool.fd());
    Writer w(moved);
    ASSERT_EQ(write_seq(w, 1, 0, 0b11), WriteResult::written);
  }
  EXPECT_NE(fcntl(pool.fd(), F_GETFD), -1) << "the alias closed the pool's fd";
  Reader reader(pool, ReaderOptions{}, 1);
  Collector col;
  drain(reader, col);
  EXPECT_EQ(col.seqs[1], std::vector<uint64_t>{0});
}

// A sleeping reader is woken by a record of its session, never by another session's.
TEST(DataplaneSharedSessions, AWriterWakesOnlyTheReadersOfItsRecord) {
  Pool pool = Pool::create(small_config(4, 2, 4), "shared-wake");
  ASSERT_EQ(pool.add_session(), 1u);
  Reader reader0(pool, ReaderOptions{}, 0);
  Reader reader1(pool, ReaderOptions{}, 1);
  Pool::Shared& s = *pool.shared();
  const uint32_t token0 = reader0.prepare_wait();
  const uint32_t token1 = reader1.prepare_wait();
  Writer w(pool);
  ASSERT_EQ(write_seq(w, 1, 0, 0b01), WriteResult::written);
  EXPECT_NE(s.session[0].wake_seq.load(), token0);
  EXPECT_EQ(s.session[1].wake_seq.load(), token1) << "a record of session 0 woke session 1";
  EXPECT_EQ(s.readers_sleeping.load(), 0b10u);
  ASSERT_EQ(write_seq(w, 1, 1, 0b10), WriteResult::written);
  EXPECT_NE(s.session[1].wake_seq.load(), token1);
  EXPECT_EQ(s.readers_sleeping.load(), 0u);
}

// A dead reader's holds are let go by recovery: the next reader of its session resumes where
// it stopped, and the other session never noticed.
TEST(DataplaneSharedSessions, ADeadReaderIsRecoveredForItsSessionAlone) {
  Pool pool = Pool::create(small_config(1, 2, 64), "shared-dead-reader");
  ASSERT_EQ(pool.add_session(), 1u);
  constexpr uint64_t kEvents = 300;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i)
      ASSERT_EQ(write_seq(w, 1, i, 0b11), WriteResult::written);
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Reader reader(pool, ReaderOptions{.max_claim_per_poll = 2}, 1);
    int delivered = 0;
    reader.poll([&](const RecordView&) {
      if (++delivered == 5) raise(SIGKILL);  // in the middle of what it claimed
    });
    _exit(1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(pool.reader_pid(1), static_cast<uint32_t>(child));
  EXPECT_GT(pool.recover_dead_peers(), 0u);
  EXPECT_EQ(pool.reader_pid(1), 0u);
  Collector got0, got1;
  Reader reader0(pool, ReaderOptions{}, 0);
  Reader reader1(pool, ReaderOptions{}, 1);
  drain(reader0, got0);
  drain(reader1, got1);
  EXPECT_EQ(got0.count, kEvents);
  EXPECT_EQ(got1.seqs[1].back(), kEvents - 1);
  got1.expect_per_writer_increasing();
  expect_balanced(pool, kEvents, 0);
  const Counters c = pool.query();
  EXPECT_EQ(c.free_buffers, c.number_of_buffers);
}

// A writer in another process killed at varied points while two sessions read, one of them
// too slowly in some rounds: for each session, every record written for it up to the last
// one delivered was delivered to it once and in order, or counted lost to it.
TEST(DataplaneSharedSessions, AWriterKilledMidStreamLeavesEachSessionAccountedFor) {
  const auto two_sessions_of = [](uint64_t seq) { return static_cast<uint32_t>(seq % 3) + 1; };
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Pool pool = Pool::create(small_config(1, 2, 8), "shared-killed");
    ASSERT_EQ(pool.add_session(), 1u);
    Reader reader0(pool, ReaderOptions{}, 0);
    Reader reader1(pool, ReaderOptions{}, 1);
    // How many writes the child finished; the one under way when it is killed may or may not
    // have been committed or counted lost.
    std::atomic<uint64_t>* finished = shared_counter();
    ASSERT_NE(finished, nullptr);
    const pid_t child = fork_endless_writer(pool, [&](Writer& w, uint64_t i) {
      (void)write_seq(w, 1, i, two_sessions_of(i));
      finished->store(i + 1, std::memory_order_release);
    });
    ASSERT_GE(child, 0);
    Collector got[2];
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20 + 7 * round);
    while (std::chrono::steady_clock::now() < until) {
      reader0.poll(got[0].callback());
      if (round % 2 == 0) reader1.poll(got[1].callback());
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    ASSERT_EQ(waitpid(child, nullptr, 0), child);
    pool.recover_dead_peers();
    drain(reader0, got[0]);
    drain(reader1, got[1]);
    const uint64_t done = finished->load();
    munmap(finished, sizeof(std::atomic<uint64_t>));
    EXPECT_GT(done, 0u);
    for (uint32_t session = 0; session < 2; ++session) {
      SCOPED_TRACE("session " + std::to_string(session));
      got[session].expect_per_writer_increasing();
      uint64_t written = 0;
      for (uint64_t i = 0; i < done; ++i) written += (two_sessions_of(i) >> session) & 1;
      const uint64_t under_way = (two_sessions_of(done) >> session) & 1;
      const Counters c = pool.query(session);
      EXPECT_EQ(got[session].count, c.events_delivered);
      const uint64_t accounted = c.events_delivered + c.realtime_events_lost + c.events_lost;
      EXPECT_GE(accounted, written);
      EXPECT_LE(accounted, written + under_way);
    }
    const Counters c = pool.query();
    EXPECT_EQ(c.free_buffers, c.number_of_buffers);
  }
}

// Another consuming process of one session is fed that session's records only.
TEST(DataplaneSharedSessions, ARelayIsFedItsSessionsRecordsOnly) {
  Pool pool = Pool::create(small_config(4, 2, 8), "shared-relay");
  ASSERT_EQ(pool.add_session(), 1u);
  Reader reader(pool, ReaderOptions{}, 1);
  RelayFeeder feeder(pool, 1);
  RelayFeeder other_feeder(pool, 0);
  RelayConsumer consumer(pool, 1);
  EXPECT_EQ(other_feeder.refresh(0), 0u) << "session 0's feeder took session 1's slot";
  EXPECT_EQ(feeder.refresh(pool.now_ns()), 1u);
  {
    Writer w(pool);
    for (uint64_t i = 0; i < 100; ++i)
      ASSERT_EQ(write_seq(w, 1, i, i % 2 == 0 ? 0b01 : 0b11), WriteResult::written);
  }
  while (reader.poll([&](const RecordView& r) { feeder.push(r); }, true) != 0) {
  }
  Collector got;
  consumer.drain(got.callback(), {});
  ASSERT_EQ(got.count, 50u);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(got.seqs[1][i], 2 * i + 1);
}

}  // namespace
}  // namespace etwrt::dataplane
