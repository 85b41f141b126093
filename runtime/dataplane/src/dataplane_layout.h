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

#include <x86intrin.h>

#include "etwrt/dataplane.h"
#include "evntcons.h"

namespace etwrt::dataplane {

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

inline constexpr uint64_t kMagic = 0x4c50444e52575445ull;  // "ETWRNDPL" little endian
inline constexpr uint32_t kLayoutVersion = 4;              // 4: schema and timestamp-override items
inline constexpr size_t kCacheLine = 64;
inline constexpr uint32_t kNoBuffer = UINT32_MAX;

// A buffer's life. Each transition is one CAS on BufferDesc::state, and the state word
// carries the owning writer's pid, so a process killed at any instruction leaves a state
// that recovery can read unambiguously.
enum Phase : uint8_t {
  kFree = 0,      // unused; commit == 0 and consumed == 0
  kWriting = 1,   // owned by one writer (pid in the word); may be pinned by the reader
  kFull = 2,      // handed to delivery, waiting for the reader (or to be reclaimed unread)
  kReading = 3,   // claimed by the reader; only the reader frees it
  kStealing = 4,  // a writer is reclaiming it unread (realtime loss), transient
};
inline constexpr uint64_t kPinned = 1ull << 8;  // reader reads its committed prefix

inline constexpr uint64_t make_state(Phase phase, uint32_t pid, bool pinned = false) {
  return uint64_t{phase} | (pinned ? kPinned : 0) | (uint64_t{pid} << 32);
}
inline constexpr Phase phase_of(uint64_t state) { return static_cast<Phase>(state & 0xff); }
inline constexpr uint32_t pid_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }
inline constexpr bool pinned(uint64_t state) { return (state & kPinned) != 0; }

// commit and consumed pack (records << 32 | bytes) so one load gives a consistent pair.
inline constexpr uint64_t pack_progress(uint32_t events, uint32_t bytes) {
  return (uint64_t{events} << 32) | bytes;
}
inline constexpr uint32_t events_of(uint64_t progress) {
  return static_cast<uint32_t>(progress >> 32);
}
inline constexpr uint32_t bytes_of(uint64_t progress) { return static_cast<uint32_t>(progress); }

struct BufferDesc {
  // Read by everyone scanning, written at transitions only.
  alignas(kCacheLine) std::atomic<uint64_t> state;
  std::atomic<uint64_t> handoff_seq;  // delivery order among Full buffers
  // Realtime loss by reclaim, counted per buffer (the pool's totals are sums), written only
  // by the holder of the Stealing state. A reclaim first records its target totals and sets
  // steal_pending, so a holder killed at any instruction leaves a reclaim that the recoverer
  // can finish with the same stores: nothing counted twice, nothing uncounted.
  std::atomic<uint64_t> lost_buffers;
  std::atomic<uint64_t> lost_events;
  std::atomic<uint64_t> steal_target_buffers;
  std::atomic<uint64_t> steal_target_events;
  std::atomic<uint64_t> steal_pending;
  // Written by the owning writer after every record (release), read by the reader.
  alignas(kCacheLine) std::atomic<uint64_t> commit;
  // Written by the reader; lets a later reader (or a reclaiming writer) know what was read.
  alignas(kCacheLine) std::atomic<uint64_t> consumed;
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
  uint32_t maximum_buffers;
  uint32_t flush_timer_s;
  uint32_t realtime;
  uint32_t clock_kind;
  uint64_t tsc_base;
  uint64_t mono_base_ns;
  uint64_t ns_per_tick_q32;  // ns per TSC tick, 32.32 fixed point

  alignas(kCacheLine) std::atomic<uint32_t> allocated;  // NumberOfBuffers
  std::atomic<uint32_t> alloc_hint;                     // where the next free scan starts
  std::atomic<uint64_t> next_seq;
  // Bumped by every change that can give a writer a buffer (a buffer freed or delivered, a
  // reader attached or gone): a writer that found none skips its scan until this moves, so a
  // lost event stays cheap however many buffers the pool has.
  std::atomic<uint64_t> supply_epoch;

  alignas(kCacheLine) std::atomic<uint64_t> events_lost;
  std::atomic<uint64_t> realtime_buffers_lost;
  std::atomic<uint64_t> realtime_events_lost;
  std::atomic<uint64_t> buffers_written;
  std::atomic<uint64_t> writer_recoveries;

  alignas(kCacheLine) std::atomic<uint32_t> reader_pid;  // 0 = no consumer attached
  std::atomic<uint64_t> events_delivered;
  std::atomic<uint64_t> flush_requests;

  // The idle reader's futex (README "Idle wait"). Every commit reads reader_sleeping (a line
  // only the reader writes, so it stays in every writer's cache); only a writer that finds it
  // set clears it, bumps wake_seq and makes the FUTEX_WAKE system call.
  alignas(kCacheLine) std::atomic<uint32_t> reader_sleeping;
  std::atomic<uint32_t> wake_seq;
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
  uint16_t ext_count;
  uint64_t timestamp_ns;
  uint32_t process_id;
  uint32_t thread_id;
  GUID provider_id;
  EVENT_DESCRIPTOR descriptor;
  GUID activity_id;
  uint32_t user_data_size;
  uint32_t ext_bytes;  // bytes of extended items following this header
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

// A writer saw reader_sleeping set after a commit: wake the reader (once per sleep).
void wake_sleeping_reader(Pool::Shared& shared);

// Hands a buffer that `owner_pid` is writing to delivery: Full, or straight to Reading when
// the reader had pinned it (it already tracks it). Returns false when the buffer was not in
// Writing by that owner (nothing changed).
bool hand_off(Pool::Shared& shared, uint32_t index, uint32_t owner_pid);

// Finishes reclaiming a buffer the caller holds in Stealing: its unread records are counted
// lost (once, even if an earlier holder died half-way) and commit/consumed are cleared.
void count_reclaimed(BufferDesc& desc);

// RealTimeBuffersLost and the events those buffers held: the reader's own count (corrupt
// records) plus every buffer's reclaims.
struct RealtimeLoss {
  uint64_t buffers = 0;
  uint64_t events = 0;
};
RealtimeLoss realtime_loss(Pool::Shared& shared);

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
                            uint32_t process_id, uint32_t thread_id, std::byte* out) {
  // Fields are stored straight into the buffer (8-aligned, trivially copyable header).
  RecordHeader* h = new (out) RecordHeader;
  h->size = static_cast<uint32_t>(sizes.total);
  const uint16_t ext_count =
      uint16_t{in.related_activity_id != nullptr} + uint16_t{!in.provider_traits.empty()} +
      uint16_t{!in.event_schema.empty()} + uint16_t{in.timestamp_override != nullptr};
  h->flags = EVENT_HEADER_FLAG_64_BIT_HEADER | in.extra_flags |
             (ext_count != 0 ? EVENT_HEADER_FLAG_EXTENDED_INFO : 0);
  h->ext_count = ext_count;
  // Atomic (a plain store on x86): the reader may peek at the first timestamp of a buffer it
  // has not taken, while a writer reclaims and rewrites it.
  std::atomic_ref<uint64_t>(h->timestamp_ns).store(timestamp_ns, std::memory_order_relaxed);
  h->process_id = process_id;
  h->thread_id = thread_id;
  h->provider_id = *in.provider_id;
  h->descriptor = *in.descriptor;
  h->activity_id = in.activity_id != nullptr ? *in.activity_id : GUID{};
  h->user_data_size = static_cast<uint32_t>(sizes.user);
  h->ext_bytes = static_cast<uint32_t>(sizes.ext);
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
