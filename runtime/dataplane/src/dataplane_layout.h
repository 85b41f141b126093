/*
 * etwrt data plane: the pool's layout in shared memory, internal to etwrt_dataplane.
 * Everything here lives in one mapping shared by processes: no pointers, only offsets from
 * the mapping's start, and only address-free lock-free atomics.
 */
#ifndef ETWRT_DATAPLANE_LAYOUT_H
#define ETWRT_DATAPLANE_LAYOUT_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include <sys/rseq.h>
#include <unistd.h>
#include <x86intrin.h>

#include "etwrt/dataplane.h"
#include "evntcons.h"

namespace etwrt::dataplane {

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

inline constexpr uint64_t kMagic = 0x4c50444e52575445ull;  // "ETWRNDPL" little endian
inline constexpr uint32_t kLayoutVersion = 5;              // 5: sessions sharing a pool
inline constexpr size_t kCacheLine = 64;
inline constexpr uint32_t kNoBuffer = UINT32_MAX;

// A buffer's life. Each transition is one CAS on BufferDesc::state, and the state word
// carries the owning writer's pid and the sessions that hold or still need the buffer, so a
// process killed at any instruction leaves a state that recovery can read unambiguously.
enum Phase : uint8_t {
  kFree = 0,      // unused; commit == 0 and every consumed == 0
  kWriting = 1,   // owned by one writer (pid in the word); readers may hold it (partial reads)
  kFull = 2,      // handed to delivery: its pending sessions read it, or it is reclaimed unread
  kStealing = 4,  // a writer reclaims it unread (realtime loss), or its last reader frees it
};

// The sessions of a pool (README "Buffers shared among sessions"): each has a bit in every
// record it accepted (RecordHeader::sessions) and in the state word's two masks:
// - held: its reader has the buffer open. A held buffer is never reclaimed;
// - pending: it has not read the buffer to its end since the hand-off. The buffer is free
//   once no session holds it or has it pending.
inline constexpr uint32_t kMaxSessions = kMaxPoolSessions;
inline constexpr uint32_t kAllSessions = (1u << kMaxSessions) - 1;

inline constexpr uint64_t make_state(Phase phase, uint32_t pid, uint32_t held = 0,
                                     uint32_t pending = 0) {
  return uint64_t{phase} | (uint64_t{held & kAllSessions} << 8) |
         (uint64_t{pending & kAllSessions} << 16) | (uint64_t{pid} << 32);
}
inline constexpr Phase phase_of(uint64_t state) { return static_cast<Phase>(state & 0xff); }
inline constexpr uint32_t pid_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }
inline constexpr uint32_t held_of(uint64_t state) {
  return static_cast<uint32_t>(state >> 8) & kAllSessions;
}
inline constexpr uint32_t pending_of(uint64_t state) {
  return static_cast<uint32_t>(state >> 16) & kAllSessions;
}
inline constexpr uint64_t with_masks(uint64_t state, uint32_t held, uint32_t pending) {
  return make_state(phase_of(state), pid_of(state), held, pending);
}

// commit and consumed pack (records << 32 | bytes) so one load gives a consistent pair.
inline constexpr uint64_t pack_progress(uint32_t events, uint32_t bytes) {
  return (uint64_t{events} << 32) | bytes;
}
inline constexpr uint32_t events_of(uint64_t progress) {
  return static_cast<uint32_t>(progress >> 32);
}
inline constexpr uint32_t bytes_of(uint64_t progress) { return static_cast<uint32_t>(progress); }

template <typename Fn>
void for_each_session(uint32_t mask, Fn fn) {
  for (uint32_t s = 0; s < kMaxSessions; ++s)
    if ((mask & (1u << s)) != 0) fn(s);
}

struct BufferDesc {
  // Read by everyone scanning, written at transitions only.
  alignas(kCacheLine) std::atomic<uint64_t> state;
  std::atomic<uint64_t> handoff_seq;  // delivery order among Full buffers
  // The sessions of the records committed in it (their union), written by the owning writer
  // when a record adds one; the hand-off makes it the pending mask. `mixed`: not every record
  // is for all of them, so what a session did not read must be counted record by record.
  std::atomic<uint16_t> sessions;
  std::atomic<uint16_t> mixed;
  // A reclaim first records its target totals and sets steal_pending, so a holder killed at
  // any instruction leaves a reclaim that the recoverer finishes with the same stores.
  std::atomic<uint32_t> steal_pending;
  // Written by the owning writer after every record (release), read by the readers.
  alignas(kCacheLine) std::atomic<uint64_t> commit;
  // Per session, written by its reader: what it read; lets a later reader of that session (or
  // a reclaiming writer) know where it stopped.
  alignas(kCacheLine) std::atomic<uint64_t> consumed[kMaxSessions];
  // Realtime loss by reclaim, per session, counted per buffer (the session's totals are sums)
  // and written only by the holder of the Stealing state.
  // A session's four side by side: a reclaim writes, and a reader sums, one line per session.
  struct SessionLoss {
    std::atomic<uint64_t> lost_buffers;
    std::atomic<uint64_t> lost_events;
    std::atomic<uint64_t> steal_target_buffers;
    std::atomic<uint64_t> steal_target_events;
  };
  alignas(kCacheLine) SessionLoss loss[kMaxSessions];
};

enum ClockKind : uint32_t { kClockMonotonic = 0, kClockTsc = 1 };

// One more consuming process's feed (README "Several consuming processes"): a byte ring the
// process holding the pool's Reader (the feeder) fills with what it delivers, and the slot's
// consumer drains. Slot phase in `state` (with the consumer's pid above bit 32).
enum RelayPhase : uint8_t {
  kRelayFree = 0,
  kRelayRequested = 1,  // claimed by a consumer, not yet fed
  kRelayActive = 2,     // fed since `since_ns`
};
struct RelaySlot {
  alignas(kCacheLine) std::atomic<uint64_t> state;
  std::atomic<uint32_t> session;   // whose records it is fed (set by its claimer)
  std::atomic<uint64_t> since_ns;  // first timestamp the feeder guarantees to forward
  std::atomic<uint32_t> ended;     // the session stopped and everything was forwarded
  // Cumulative losses of this consumer (the pool's, from the activation on, plus records the
  // ring had no room for), written by the feeder; in-stream marks carry the values to report.
  std::atomic<uint64_t> lost_buffers;
  std::atomic<uint64_t> lost_records;
  std::atomic<uint64_t> lost_events;
  alignas(kCacheLine) std::atomic<uint64_t> head;  // bytes written (feeder)
  alignas(kCacheLine) std::atomic<uint64_t> tail;  // bytes read (consumer)
  std::atomic<uint32_t> consumer_sleeping;
  std::atomic<uint32_t> wake_seq;
};
inline constexpr uint32_t kRelaySlots = 4;
inline constexpr uint64_t kRelayRingBytes = 1u << 20;
// The pool's tail: the slots' descriptors, then their rings.
inline constexpr uint64_t kRelayBytes = kRelaySlots * (sizeof(RelaySlot) + kRelayRingBytes);

struct Pool::Shared {
  // Immutable after creation.
  uint64_t magic;
  uint32_t version;
  uint32_t header_bytes;
  uint64_t total_bytes;
  uint64_t desc_offset;
  uint64_t data_offset;
  uint32_t buffer_bytes;
  uint32_t minimum_buffers;
  uint32_t maximum_buffers;  // the reserve: descriptors and data are laid out for this many
  uint32_t flush_timer_s;
  uint32_t realtime;
  uint32_t clock_kind;
  uint64_t tsc_base;
  uint64_t mono_base_ns;
  uint64_t ns_per_tick_q32;  // ns per TSC tick, 32.32 fixed point

  alignas(kCacheLine) std::atomic<uint32_t> allocated;  // NumberOfBuffers
  // How far `allocated` may grow: the sum of the sessions' MaximumBuffers.
  std::atomic<uint32_t> growth_cap;
  std::atomic<uint32_t> alloc_hint;  // where the next free scan starts
  std::atomic<uint64_t> next_seq;
  // Bumped by every change that can give a writer a buffer (a buffer freed or delivered, a
  // reader attached or gone): a writer that found none skips its scan until this moves, so a
  // lost event stays cheap however many buffers the pool has.
  std::atomic<uint64_t> supply_epoch;

  std::atomic<uint64_t> writer_recoveries;
  // Bumped by every reclaim once its losses are stored: readers sum the buffers' loss
  // counters only when it moved (they are lines a poll would otherwise read per buffer).
  std::atomic<uint64_t> reclaims;
  // The sessions that exist in the pool (joined, not removed), and those ever joined: an
  // index is never given twice, so a record written for a removed session (its writer had
  // not yet heard) is never taken for a later one's.
  std::atomic<uint32_t> sessions_active;
  std::atomic<uint32_t> sessions_used;

  // The idle readers (README "Idle wait"), one bit per session. Every commit reads this word
  // (a line only readers write, so it stays in every writer's cache); only a writer that
  // finds the bit of a session of its record clears it, bumps that session's wake_seq and
  // makes the FUTEX_WAKE system call.
  alignas(kCacheLine) std::atomic<uint32_t> readers_sleeping;

  // One cache line per session.
  struct Session {
    alignas(kCacheLine) std::atomic<uint32_t> reader_pid;  // 0 = no consumer attached
    std::atomic<uint32_t> wake_seq;                        // the reader's futex word
    std::atomic<uint64_t> events_delivered;
    std::atomic<uint64_t> flush_requests;
    std::atomic<uint64_t> events_lost;      // EventsLost: no buffer, or too large
    std::atomic<uint64_t> buffers_written;  // hand-offs of buffers holding its records
    // What its reader counted lost itself (corrupt records); reclaims are in the buffers.
    std::atomic<uint64_t> realtime_buffers_lost;
    std::atomic<uint64_t> realtime_events_lost;
    uint32_t maximum_buffers;  // what the session added to growth_cap
  };
  static_assert(sizeof(Session) == kCacheLine);
  Session session[kMaxSessions];

  // Bumped when a relay slot is claimed or released: the feeder rescans the slots.
  std::atomic<uint64_t> relay_changes;
  uint64_t relay_offset;  // immutable: kRelaySlots descriptors, then their rings

  RelaySlot* relay(uint32_t i) {
    return reinterpret_cast<RelaySlot*>(reinterpret_cast<std::byte*>(this) + relay_offset) + i;
  }
  std::byte* relay_ring(uint32_t i) {
    return reinterpret_cast<std::byte*>(this) + relay_offset + kRelaySlots * sizeof(RelaySlot) +
           uint64_t{i} * kRelayRingBytes;
  }

  BufferDesc* descs() {
    return reinterpret_cast<BufferDesc*>(reinterpret_cast<std::byte*>(this) + desc_offset);
  }
  std::byte* data(uint32_t index) {
    return reinterpret_cast<std::byte*>(this) + data_offset + uint64_t{index} * buffer_bytes;
  }
};

// The on-buffer record header (see README.md, "Record layout"). 8-aligned, 80 bytes.
struct RecordHeader {
  uint32_t size;  // whole record, 8-aligned
  uint16_t flags;
  uint8_t ext_count;
  uint8_t sessions;  // the pool's sessions that accepted it, one bit each
  uint64_t timestamp_ns;
  uint32_t process_id;
  uint32_t thread_id;
  GUID provider_id;
  EVENT_DESCRIPTOR descriptor;
  GUID activity_id;
  uint32_t user_data_size;
  // The processor the writer ran on when it wrote the record (its ETW_BUFFER_CONTEXT). The
  // extended items' bytes are not stored: the size less this header and the user data (padded).
  uint16_t processor;
  uint16_t reserved;  // 0
};
static_assert(sizeof(RecordHeader) == 80);

struct ExtItemHeader {
  uint16_t ext_type;  // EVENT_HEADER_EXT_TYPE_*
  uint16_t data_size;
  uint32_t reserved;
};
static_assert(sizeof(ExtItemHeader) == 8);
// A record's item that consumers never see as such: it replaces EVENT_HEADER.TimeStamp. Beyond
// EVENT_HEADER_EXT_TYPE_MAX so that it can never clash with a documented type.
inline constexpr uint16_t kExtTimestampOverride = 0x8001;

inline constexpr size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// The reader's framing of the record at `p` (`avail` bytes up to its writer's commit): its
// size and timestamp, read before it is decoded, for the merge (frame_record, the same
// exported for tests and the fuzz target). False when the size cannot be a record's there.
inline bool frame_at(const std::byte* p, size_t avail, uint32_t& size, uint64_t& timestamp_ns) {
  if (avail < sizeof(RecordHeader)) return false;
  std::memcpy(&size, p + offsetof(RecordHeader, size), sizeof size);
  if (size < sizeof(RecordHeader) || size % 8 != 0 || size > avail) return false;
  std::memcpy(&timestamp_ns, p + offsetof(RecordHeader, timestamp_ns), sizeof timestamp_ns);
  return true;
}

uint64_t monotonic_ns();

// The pool's clock. Inline: the writer reads it once per record, and a call to it saved and
// restored registers around the reading.
inline uint64_t pool_now_ns(const Pool::Shared& shared) {
  if (shared.clock_kind == kClockTsc) [[likely]] {
    const int64_t ticks = static_cast<int64_t>(__rdtsc() - shared.tsc_base);
    return shared.mono_base_ns +
           static_cast<uint64_t>((static_cast<__int128>(ticks) * shared.ns_per_tick_q32) >> 32);
  }
  return monotonic_ns();
}

// The processor this thread runs on, for the record's ETW_BUFFER_CONTEXT: the kernel keeps it
// in the thread's rseq area (glibc 2.35 and later register one), so it is one load; where
// registration is off (GLIBC_TUNABLES glibc.pthread.rseq=0) or failed, sched_getcpu's.
uint16_t processor_without_rseq();
inline uint16_t current_processor() {
  const auto* area = reinterpret_cast<const volatile struct rseq*>(
      static_cast<const char*>(__builtin_thread_pointer()) + __rseq_offset);
  const auto cpu = static_cast<int32_t>(area->cpu_id);
  if (cpu >= 0 && cpu <= 0xFFFF) [[likely]]
    return static_cast<uint16_t>(cpu);
  return processor_without_rseq();
}

// A writer saw the bit of a session of its record in readers_sleeping after a commit: wake
// those readers (once per sleep).
void wake_sleeping_readers(Pool::Shared& shared, uint32_t sessions);

// Hands a buffer that `owner_pid` is writing to delivery: Full, pending for the sessions of
// its records that still exist (readers holding it keep it). A buffer nobody needs is freed.
// Returns false when the buffer was not in Writing by that owner (nothing changed).
bool hand_off(Pool::Shared& shared, uint32_t index, uint32_t owner_pid);

// Finishes with a buffer the caller holds in Stealing: the records each of the word's pending
// sessions had not read are counted lost to it (once, even if an earlier holder died
// half-way), and commit, consumed and the sessions are cleared.
void count_reclaimed(Pool::Shared& shared, uint32_t index, uint32_t pending);

// Frees a buffer held in Stealing by the caller, nothing left to count in it.
void free_stolen(Pool::Shared& shared, uint32_t index);

// Takes sessions off a Writing or Full buffer with one CAS of its state word: `change(state,
// held, pending)` narrows the two masks, or returns false when there is nothing to do. A Full
// buffer that no session holds or needs any more is freed, through Stealing so that nobody
// takes it half reset; `before_free` runs just before.
enum class MaskChange { none, changed, freed };
template <typename Change, typename BeforeFree>
MaskChange change_masks(Pool::Shared& shared, uint32_t index, Change change,
                        BeforeFree before_free) {
  BufferDesc& d = shared.descs()[index];
  uint64_t state = d.state.load(std::memory_order_acquire);
  for (;;) {
    const Phase phase = phase_of(state);
    uint32_t held = held_of(state);
    uint32_t pending = pending_of(state);
    if ((phase != kWriting && phase != kFull) || !change(state, held, pending))
      return MaskChange::none;
    const bool unneeded = phase == kFull && held == 0 && pending == 0;
    const uint64_t next = unneeded ? make_state(kStealing, static_cast<uint32_t>(getpid()))
                                   : with_masks(state, held, pending);
    if (d.state.compare_exchange_weak(state, next, std::memory_order_acq_rel)) {
      if (!unneeded) return MaskChange::changed;
      before_free();
      free_stolen(shared, index);
      return MaskChange::freed;
    }
  }
}

// The records of `session` in a buffer between its reader's consumed position and `commit`.
// Past a record that does not frame, every record left counts (they cannot be told apart).
uint32_t unread_records(Pool::Shared& shared, uint32_t index, uint32_t session, uint64_t commit);

// RealTimeBuffersLost and the events those buffers held, for one session: its reader's own
// count (corrupt records) plus every buffer's reclaims.
struct RealtimeLoss {
  uint64_t buffers = 0;
  uint64_t events = 0;
};
RealtimeLoss realtime_loss(Pool::Shared& shared, uint32_t session);
// The reclaims' part alone (a sum over the buffers).
RealtimeLoss reclaimed_loss(Pool::Shared& shared, uint32_t session);

// A record's parts, measured once: the writer sizes its reservation and encodes with the
// same figures (encoded_size and encode_record measure them each). Both are inline so that
// Writer::write, EventWrite's hottest code, makes no call for them (a third of its own cost
// when they were calls).
struct RecordSizes {
  size_t ext = 0;    // extended items, headers and padding included
  size_t user = 0;   // the payload
  size_t total = 0;  // the whole record, 8-aligned
};

inline RecordSizes measure_record(const EventInput& in) {
  RecordSizes sizes;
  if (in.related_activity_id != nullptr) sizes.ext += sizeof(ExtItemHeader) + align8(sizeof(GUID));
  if (!in.provider_traits.empty())
    sizes.ext += sizeof(ExtItemHeader) + align8(in.provider_traits.size());
  if (!in.event_schema.empty()) sizes.ext += sizeof(ExtItemHeader) + align8(in.event_schema.size());
  if (in.timestamp_override != nullptr) sizes.ext += sizeof(ExtItemHeader) + sizeof(uint64_t);
  for (const EVENT_DATA_DESCRIPTOR& d : in.user_data) sizes.user += d.Size;
  sizes.total = align8(sizeof(RecordHeader) + sizes.ext + sizes.user);
  return sizes;
}

// One extended item (header, data, zeroed padding); returns the end.
std::byte* put_ext(std::byte* out, uint16_t type, const void* data, size_t size);

inline void encode_measured(const EventInput& in, const RecordSizes& sizes, uint64_t timestamp_ns,
                            uint32_t process_id, uint32_t thread_id, uint16_t processor,
                            uint8_t sessions, std::byte* out) {
  // Fields are stored straight into the buffer (8-aligned, trivially copyable header).
  RecordHeader* h = new (out) RecordHeader;
  h->size = static_cast<uint32_t>(sizes.total);
  const uint8_t ext_count =
      uint8_t{in.related_activity_id != nullptr} + uint8_t{!in.provider_traits.empty()} +
      uint8_t{!in.event_schema.empty()} + uint8_t{in.timestamp_override != nullptr};
  h->flags = EVENT_HEADER_FLAG_64_BIT_HEADER | in.extra_flags |
             (ext_count != 0 ? EVENT_HEADER_FLAG_EXTENDED_INFO : 0);
  h->ext_count = ext_count;
  h->sessions = sessions;
  // Atomic (a plain store on x86): the reader may peek at the first timestamp of a buffer it
  // has not taken, while a writer reclaims and rewrites it.
  std::atomic_ref<uint64_t>(h->timestamp_ns).store(timestamp_ns, std::memory_order_relaxed);
  h->process_id = process_id;
  h->thread_id = thread_id;
  h->provider_id = *in.provider_id;
  h->descriptor = *in.descriptor;
  h->activity_id = in.activity_id != nullptr ? *in.activity_id : GUID{};
  h->user_data_size = static_cast<uint32_t>(sizes.user);
  h->processor = processor;
  h->reserved = 0;
  std::byte* p = out + sizeof(RecordHeader);
  if (sizes.ext != 0) [[unlikely]] {
    if (in.related_activity_id != nullptr)
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID, in.related_activity_id,
                  sizeof(GUID));
    if (!in.provider_traits.empty())
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_PROV_TRAITS, in.provider_traits.data(),
                  in.provider_traits.size());
    if (!in.event_schema.empty())
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, in.event_schema.data(),
                  in.event_schema.size());
    if (in.timestamp_override != nullptr)
      p = put_ext(p, kExtTimestampOverride, in.timestamp_override, sizeof(uint64_t));
  }
  for (const EVENT_DATA_DESCRIPTOR& d : in.user_data) {
    if (d.Size != 0) std::memcpy(p, reinterpret_cast<const void*>(d.Ptr), d.Size);
    p += d.Size;
  }
  // Padding is zeroed so that a buffer's bytes do not depend on what it held before.
  for (std::byte* end = out + sizes.total; p != end; ++p) *p = std::byte{0};
}

}  // namespace etwrt::dataplane

#endif  // ETWRT_DATAPLANE_LAYOUT_H
