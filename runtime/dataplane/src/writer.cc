// The writer: EventWrite's back end. Common path: copy into the owned buffer, one release
// store of the commit word. Slow path (once per buffer): hand off, find the next buffer.
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "dataplane_layout.h"

namespace etwrt::dataplane {

Writer::Writer(Pool& pool)
    : pool_(pool),
      pid_(static_cast<uint32_t>(getpid())),
      tid_(static_cast<uint32_t>(syscall(SYS_gettid))) {}

Writer::~Writer() { release(); }

void Writer::release() {
  if (buffer_ == kNoBuffer) return;
  hand_off(*pool_.shared(), buffer_, pid_);
  buffer_ = kNoBuffer;
  data_ = nullptr;
}

uint16_t processor_without_rseq() {
  const int cpu = sched_getcpu();
  return cpu >= 0 && cpu <= 0xFFFF ? static_cast<uint16_t>(cpu) : 0;
}

namespace {

// Free -> Writing by one CAS that also records the owner, so there is no instant at which a
// buffer is taken but unowned.
bool try_take(BufferDesc& d, uint32_t pid) {
  uint64_t state = d.state.load(std::memory_order_relaxed);
  if (state != make_state(kFree, 0)) return false;
  // acq_rel: a reader that sees this buffer taken also sees the hand-off of the previous one.
  return d.state.compare_exchange_strong(state, make_state(kWriting, pid),
                                         std::memory_order_acq_rel, std::memory_order_relaxed);
}

}  // namespace

bool Writer::acquire_buffer() {
  Pool::Shared& s = *pool_.shared();
  BufferDesc* descs = s.descs();
  const uint64_t epoch = s.supply_epoch.load(std::memory_order_acquire);
  if (epoch == failed_epoch_) return false;  // nothing changed since the last full search
  failed_epoch_ = epoch;                     // until a search succeeds
  const auto take = [&](uint32_t index) {
    failed_epoch_ = kNoEpoch;
    buffer_ = index;
    data_ = s.data(index);
    offset_ = 0;
    events_ = 0;
    sessions_ = 0;
    mixed_ = false;
    s.alloc_hint.store(index + 1, std::memory_order_relaxed);
    return true;
  };

  // 1. A free buffer among those allocated, starting where the last one was found: buffers
  // are freed roughly in the order they were taken, so this usually succeeds at once.
  uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  const uint32_t hint = s.alloc_hint.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < allocated; ++i) {
    const uint32_t index = (hint + i) % allocated;
    if (try_take(descs[index], pid_)) return take(index);
  }
  // 2. Grow towards MaximumBuffers. The new index may be taken by a scanning writer before us.
  while (allocated < std::min(s.growth_cap.load(std::memory_order_relaxed), s.maximum_buffers)) {
    if (s.allocated.compare_exchange_weak(allocated, allocated + 1, std::memory_order_acq_rel)) {
      if (try_take(descs[allocated], pid_)) return take(allocated);
      allocated = s.allocated.load(std::memory_order_acquire);
    }
  }
  // 3. Realtime with consumers attached: one is too slow. Reclaim the oldest delivered buffer
  // no reader holds, and count what each session had not read in it (RealTimeBuffersLost).
  // A session with no consumer keeps what it buffered (a first consumer gets it), as a pool
  // of its own would: its buffers are not reclaimed.
  if (s.realtime == 0) return false;
  uint32_t with_reader = 0;
  for (uint32_t i = 0; i < kMaxSessions; ++i)
    if (s.session[i].reader_pid.load(std::memory_order_acquire) != 0) with_reader |= 1u << i;
  if (with_reader == 0) return false;
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint32_t oldest = kNoBuffer;
    uint64_t oldest_seq = UINT64_MAX;
    uint64_t oldest_state = 0;
    for (uint32_t i = 0; i < allocated; ++i) {
      const uint64_t state = descs[i].state.load(std::memory_order_acquire);
      if (state == make_state(kFree, 0) && try_take(descs[i], pid_)) return take(i);
      if (phase_of(state) != kFull || held_of(state) != 0) continue;
      if ((pending_of(state) & ~with_reader) != 0) continue;
      const uint64_t seq = descs[i].handoff_seq.load(std::memory_order_relaxed);
      if (seq < oldest_seq) {
        oldest = i;
        oldest_seq = seq;
        oldest_state = state;
      }
    }
    if (oldest == kNoBuffer) return false;
    BufferDesc& d = descs[oldest];
    const uint32_t pending = pending_of(oldest_state);
    if (!d.state.compare_exchange_strong(oldest_state, make_state(kStealing, pid_, 0, pending),
                                         std::memory_order_acquire))
      continue;
    count_reclaimed(s, oldest, pending);
    d.state.store(make_state(kWriting, pid_), std::memory_order_release);
    return take(oldest);
  }
  return false;
}

WriteResult Writer::write(const EventInput& event) { return write(event, 0, 1); }

WriteResult Writer::write(const EventInput& event, uint64_t timestamp_ns) {
  return write(event, timestamp_ns, 1);
}

void Writer::count_lost(uint32_t sessions) {
  Pool::Shared& s = *pool_.shared();
  for_each_session(sessions, [&](uint32_t i) {
    s.session[i].events_lost.fetch_add(1, std::memory_order_relaxed);
  });
}

// A record for other sessions than the buffer's records so far (or its first record).
void Writer::note_sessions(BufferDesc& d, uint32_t sessions) {
  if (events_ > 1 && !mixed_) {
    mixed_ = true;
    d.mixed.store(1, std::memory_order_relaxed);
  }
  if (mixed_) {
    // From now on only a session new to the buffer changes anything.
    if ((sessions & ~sessions_) == 0) return;
    sessions |= sessions_;
  }
  sessions_ = sessions;
  d.sessions.store(static_cast<uint16_t>(sessions_), std::memory_order_relaxed);
}

// Both inlined into write and write_copy: as calls they cost a tenth of a copy's work.
[[gnu::always_inline]] inline std::byte* Writer::reserve(size_t size) {
  Pool::Shared& s = *pool_.shared();
  if (buffer_ == kNoBuffer || offset_ + size > s.buffer_bytes) {
    release();
    if (!acquire_buffer()) return nullptr;
  }
  return data_ + offset_;
}

[[gnu::always_inline]] inline void Writer::commit(uint32_t size, uint32_t sessions) {
  Pool::Shared& s = *pool_.shared();
  BufferDesc& d = s.descs()[buffer_];
  offset_ += size;
  last_size_ = size;
  ++events_;
  // Packed before the call below: reloaded after it, the two counters just stored came back
  // as one 8-byte load, which store forwarding cannot serve (+20% on four sessions' writes).
  const uint64_t progress = pack_progress(events_, offset_);
  // The hand-off makes the buffer pending for these sessions; published with the commit.
  if (sessions != sessions_) [[unlikely]]
    note_sessions(d, sessions);
  // The commit point: the record's bytes become visible to the readers together with it.
  d.commit.store(progress, std::memory_order_release);
  // A load of a line that stays in this core's cache while the readers are awake; no fence,
  // so a reader arming its sleep at this very instant may miss this wake (its wait is bounded).
  const uint32_t sleeping = s.readers_sleeping.load(std::memory_order_relaxed) & sessions;
  if (sleeping != 0) [[unlikely]]
    wake_sleeping_readers(s, sleeping);
}

WriteResult Writer::write(const EventInput& event, uint64_t timestamp_ns, uint32_t sessions) {
  Pool::Shared& s = *pool_.shared();
  const RecordSizes sizes = measure_record(event);
  const size_t size = sizes.total;
  if (size > s.buffer_bytes || event.provider_traits.size() > 0xffff ||
      event.event_schema.size() > 0xffff) {
    count_lost(sessions);
    return WriteResult::too_large;
  }
  std::byte* out = reserve(size);
  if (out == nullptr) {
    count_lost(sessions);
    return WriteResult::lost;
  }
  // Read after a buffer is secured, so that the slow path's time is not in the record's
  // timestamp-to-commit window (see README: Order).
  if (timestamp_ns == 0) timestamp_ns = pool_now_ns(s);
  encode_measured(event, sizes, timestamp_ns, pid_, event.thread_id != 0 ? event.thread_id : tid_,
                  current_processor(), static_cast<uint8_t>(sessions), out);
  commit(static_cast<uint32_t>(size), sessions);
  return WriteResult::written;
}

WriteResult Writer::write_copy(std::span<const std::byte> record, uint32_t sessions) {
  Pool::Shared& s = *pool_.shared();
  if (record.size() > s.buffer_bytes) {
    count_lost(sessions);
    return WriteResult::too_large;
  }
  std::byte* out = reserve(record.size());
  if (out == nullptr) {
    count_lost(sessions);
    return WriteResult::lost;
  }
  std::memcpy(out, record.data(), record.size());
  // This pool's sessions, not those of the pool the record was encoded for.
  reinterpret_cast<RecordHeader*>(out)->sessions = static_cast<uint8_t>(sessions);
  commit(static_cast<uint32_t>(record.size()), sessions);
  return WriteResult::written;
}

}  // namespace etwrt::dataplane
