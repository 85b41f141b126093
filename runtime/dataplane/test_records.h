// The data plane tests' records: a payload that says who wrote it and its sequence number, a
// collector that checks their order as a reader delivers them, the accounting identity, and a
// counter a forked writer shares with the test.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <vector>

#include "etwrt/dataplane.h"
#include "evntcons.h"

namespace etwrt::dataplane {

inline constexpr GUID kProvider{0x1b2c3d4e, 0x1111, 0x2222, {1, 2, 3, 4, 5, 6, 7, 8}};

// A 32-byte payload that identifies the event: who wrote it and its sequence number.
struct Payload {
  uint32_t writer;
  uint32_t pad;
  uint64_t seq;
  uint64_t filler[2];
};
static_assert(sizeof(Payload) == 32);

inline EVENT_DATA_DESCRIPTOR describe(const void* p, uint32_t size) {
  EVENT_DATA_DESCRIPTOR d{};
  d.Ptr = reinterpret_cast<ULONGLONG>(p);
  d.Size = size;
  return d;
}

// A counter that a forked child and its parent both see (shared anonymous memory, which the
// test may munmap); nullptr when it cannot be mapped.
inline std::atomic<uint64_t>* shared_counter() {
  void* p = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : new (p) std::atomic<uint64_t>(0);
}

// A child process that writes to `pool` until the test kills it: `write(w, i)` for i = 0, 1, ...
// with a Writer of its own. The child's pid, negative when fork failed.
template <typename Write>
pid_t fork_endless_writer(Pool& pool, Write write) {
  const pid_t child = fork();
  if (child == 0) {
    Writer w(pool);
    for (uint64_t i = 0;; ++i) write(w, i);
  }
  return child;
}

// One record for the pool's sessions in `sessions` (bit i: session i).
inline WriteResult write_seq(Writer& w, uint32_t writer, uint64_t seq, uint32_t sessions = 1) {
  static constexpr EVENT_DESCRIPTOR desc{7, 1, 0, 4, 0, 0, 0x10};
  Payload payload{writer, 0, seq, {seq * 3, seq * 5}};
  const EVENT_DATA_DESCRIPTOR data = describe(&payload, sizeof payload);
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, 1);
  return w.write(in, 0, sessions);
}

inline Payload payload_of(const RecordView& r) {
  Payload p{};
  EXPECT_EQ(r.user_data.size(), sizeof p);
  if (r.user_data.size() == sizeof p) std::memcpy(&p, r.user_data.data(), sizeof p);
  return p;
}

// Collects what a reader delivers, and checks per-writer order and uniqueness as it goes.
struct Collector {
  std::map<uint32_t, std::vector<uint64_t>> seqs;  // per writer, in delivery order
  std::vector<uint64_t> timestamps;
  size_t count = 0;
  Reader::Callback callback() {
    return [this](const RecordView& r) {
      const Payload p = payload_of(r);
      seqs[p.writer].push_back(p.seq);
      timestamps.push_back(r.timestamp_ns);
      ++count;
    };
  }
  // Within one writer, sequence numbers strictly increase: no duplicate, no reordering.
  void expect_per_writer_increasing() const {
    for (const auto& [writer, v] : seqs)
      for (size_t i = 1; i < v.size(); ++i)
        ASSERT_LT(v[i - 1], v[i]) << "writer " << writer << " at " << i;
  }
};

inline PoolConfig small_config(uint32_t kb, uint32_t min, uint32_t max, bool realtime = true) {
  PoolConfig c;
  c.buffer_size_kb = kb;
  c.minimum_buffers = min;
  c.maximum_buffers = max;
  c.flush_timer_s = 0;
  c.realtime = realtime;
  c.prefer_tsc = getenv("DP_TSC") != nullptr;
  return c;
}

// The identity the whole design exists for, per session, checked once writers and readers
// are quiescent.
inline void expect_balanced(const Pool& pool, uint64_t attempts, uint32_t session = 0) {
  const Counters c = pool.query(session);
  EXPECT_EQ(attempts, c.events_delivered + c.events_lost + c.realtime_events_lost)
      << "session " << session << ": delivered " << c.events_delivered << " lost " << c.events_lost
      << " rt-lost " << c.realtime_events_lost;
  EXPECT_EQ(c.events_committed, c.events_delivered + c.realtime_events_lost)
      << "session " << session;
}

inline void drain(Reader& reader, Collector& col) {
  while (reader.poll(col.callback(), true) != 0) {
  }
}

}  // namespace etwrt::dataplane
