// Relay slots: how a pool's one Reader serves more consuming processes. The process holding
// the Reader (the feeder) copies what it delivers into each claimed slot's byte ring; a full
// ring drops records for that consumer only, counted in the slot and announced by an
// in-stream loss mark ahead of the records after the gap. Writers never see any of it.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string>

#include "dataplane_layout.h"
#include "etwrt_os.h"

namespace etwrt::dataplane {

namespace {

enum EntryKind : uint32_t { kEntryRecord = 1, kEntryMark = 2, kEntryPad = 3 };
struct EntryHeader {
  uint32_t size;  // whole entry, 8-aligned
  uint32_t kind;
};
struct Mark {  // cumulative losses of the slot's consumer up to this point of the stream
  uint64_t buffers;
  uint64_t records;
  uint64_t events;
};
enum : uint8_t { kRelayClaiming = 3, kRelayReleased = 4 };
constexpr uint64_t kLivenessCheckNs = 100'000'000;

uint64_t relay_state(uint8_t phase, uint32_t pid) {
  return uint64_t{phase} | (uint64_t{pid} << 32);
}
uint8_t relay_phase(uint64_t state) { return static_cast<uint8_t>(state & 0xff); }
uint32_t relay_pid(uint64_t state) { return static_cast<uint32_t>(state >> 32); }

bool alive(uint32_t pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

template <typename Fn>
void for_each_bit(uint32_t mask, Fn fn) {
  while (mask != 0) {
    const uint32_t i = static_cast<uint32_t>(std::countr_zero(mask));
    mask &= mask - 1;
    fn(i);
  }
}

}  // namespace

// ---- feeder ----

size_t RelayFeeder::refresh(uint64_t since_ns) {
  Pool::Shared& s = *pool_.shared();
  const uint64_t changes = s.relay_changes.load(std::memory_order_acquire);
  const uint64_t now = pool_.now_ns();
  const bool check_liveness = active_mask_ != 0 && now - last_liveness_ns_ >= kLivenessCheckNs;
  if (changes == seen_changes_ && !check_liveness) return active();
  seen_changes_ = changes;
  if (check_liveness) last_liveness_ns_ = now;
  for (uint32_t i = 0; i < kRelaySlots; ++i) {
    RelaySlot& slot = *s.relay(i);
    uint64_t state = slot.state.load(std::memory_order_acquire);
    const uint32_t bit = 1u << i;
    const uint8_t phase = relay_phase(state);
    // Another session's slot is its feeder's (the session is set before the slot is requested).
    if ((phase == kRelayRequested || phase == kRelayActive || phase == kRelayReleased) &&
        slot.session.load(std::memory_order_relaxed) != session_)
      continue;
    const bool dead = (phase == kRelayRequested || phase == kRelayActive) && check_liveness &&
                      !alive(relay_pid(state));
    if (phase == kRelayReleased || dead) {
      // Only now may the slot be claimed again: this feeder no longer writes its ring.
      drop(i);
      if (slot.state.compare_exchange_strong(state, relay_state(kRelayFree, 0),
                                             std::memory_order_acq_rel))
        s.relay_changes.fetch_add(1, std::memory_order_release);
      continue;
    }
    if (phase == kRelayRequested) {
      slot.since_ns.store(since_ns, std::memory_order_relaxed);
      if (slot.state.compare_exchange_strong(state, relay_state(kRelayActive, relay_pid(state)),
                                             std::memory_order_acq_rel)) {
        active_mask_ |= bit;
        mark_pending_ &= ~bit;
        in_gap_ &= ~bit;
      }
      continue;
    }
    // Active but not ours: fed by a reader that went away; this one takes over the feed.
    if (phase == kRelayActive) active_mask_ |= bit;
    if (phase == kRelayFree || phase == kRelayClaiming) drop(i);
  }
  return active();
}

size_t RelayFeeder::active() const { return static_cast<size_t>(std::popcount(active_mask_)); }

void RelayFeeder::drop(uint32_t slot) {
  const uint32_t bit = 1u << slot;
  active_mask_ &= ~bit;
  mark_pending_ &= ~bit;
  in_gap_ &= ~bit;
}

bool RelayFeeder::write_entry(uint32_t index, uint32_t kind, size_t payload,
                              const std::function<void(std::byte*)>& fill) {
  Pool::Shared& s = *pool_.shared();
  RelaySlot& slot = *s.relay(index);
  std::byte* ring = s.relay_ring(index);
  const uint64_t need = sizeof(EntryHeader) + align8(payload);
  if (need > kRelayRingBytes / 4) return false;
  uint64_t head = slot.head.load(std::memory_order_relaxed);
  const uint64_t used = head - slot.tail.load(std::memory_order_acquire);
  uint64_t pos = head % kRelayRingBytes;
  // An entry never wraps: the end of the ring is skipped with a pad entry.
  const uint64_t pad = pos + need > kRelayRingBytes ? kRelayRingBytes - pos : 0;
  if (kRelayRingBytes - used < pad + need) return false;
  if (pad != 0) {
    const EntryHeader h{static_cast<uint32_t>(pad), kEntryPad};
    std::memcpy(ring + pos, &h, sizeof h);
    head += pad;
    pos = 0;
  }
  fill(ring + pos + sizeof(EntryHeader));
  const EntryHeader h{static_cast<uint32_t>(need), kind};
  std::memcpy(ring + pos, &h, sizeof h);
  slot.head.store(head + need, std::memory_order_release);
  return true;
}

bool RelayFeeder::write_mark(uint32_t index) {
  RelaySlot& slot = *pool_.shared()->relay(index);
  const Mark m{slot.lost_buffers.load(std::memory_order_relaxed),
               slot.lost_records.load(std::memory_order_relaxed),
               slot.lost_events.load(std::memory_order_relaxed)};
  if (!write_entry(index, kEntryMark, sizeof m,
                   [&](std::byte* out) { std::memcpy(out, &m, sizeof m); }))
    return false;
  mark_pending_ &= ~(1u << index);
  in_gap_ &= ~(1u << index);
  return true;
}

void RelayFeeder::push(const RecordView& v) {
  if (active_mask_ == 0) return;
  EVENT_DATA_DESCRIPTOR data{};
  data.Ptr = reinterpret_cast<ULONGLONG>(v.user_data.data());
  data.Size = static_cast<ULONG>(v.user_data.size());
  EventInput in;
  in.provider_id = &v.provider_id;
  in.descriptor = &v.descriptor;
  in.activity_id = &v.activity_id;
  in.related_activity_id = v.has_related_activity_id ? &v.related_activity_id : nullptr;
  in.provider_traits = v.provider_traits;
  in.event_schema = v.event_schema;
  in.timestamp_override = v.has_timestamp_override ? &v.timestamp_override : nullptr;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, v.user_data.empty() ? 0 : 1);
  const size_t size = encoded_size(in);
  const auto fill = [&](std::byte* out) {
    encode_record(in, v.timestamp_ns, v.process_id, v.thread_id, out, v.processor);
    reinterpret_cast<RecordHeader*>(out)->flags = v.flags;  // exactly as the writer had them
  };
  for_each_bit(active_mask_, [&](uint32_t i) {
    const uint32_t bit = 1u << i;
    if ((mark_pending_ & bit) == 0 || write_mark(i)) {
      if (write_entry(i, kEntryRecord, size, fill)) return;
    }
    // No room: this consumer alone loses the record; the next entry it gets is the mark.
    RelaySlot& slot = *pool_.shared()->relay(i);
    if ((in_gap_ & bit) == 0) {
      slot.lost_buffers.fetch_add(1, std::memory_order_relaxed);
      in_gap_ |= bit;
    }
    slot.lost_records.fetch_add(1, std::memory_order_relaxed);
    mark_pending_ |= bit;
  });
}

void RelayFeeder::push_loss(const LossReport& loss) {
  for_each_bit(active_mask_, [&](uint32_t i) {
    RelaySlot& slot = *pool_.shared()->relay(i);
    slot.lost_buffers.fetch_add(loss.realtime_buffers_lost, std::memory_order_relaxed);
    slot.lost_records.fetch_add(loss.realtime_events_lost, std::memory_order_relaxed);
    slot.lost_events.fetch_add(loss.events_lost, std::memory_order_relaxed);
    mark_pending_ |= 1u << i;
    (void)write_mark(i);
  });
}

void RelayFeeder::wake() {
  for_each_bit(active_mask_, [&](uint32_t i) {
    RelaySlot& slot = *pool_.shared()->relay(i);
    if (slot.consumer_sleeping.load(std::memory_order_relaxed) == 0) return;
    if (slot.consumer_sleeping.exchange(0, std::memory_order_acq_rel) == 0) return;
    slot.wake_seq.fetch_add(1, std::memory_order_release);
    os::futex_wake_all(slot.wake_seq);
  });
}

void RelayFeeder::end() {
  for_each_bit(active_mask_, [&](uint32_t i) {
    if ((mark_pending_ & (1u << i)) != 0) (void)write_mark(i);  // else read from the slot
    RelaySlot& slot = *pool_.shared()->relay(i);
    slot.ended.store(1, std::memory_order_release);
    slot.consumer_sleeping.store(0, std::memory_order_relaxed);
    slot.wake_seq.fetch_add(1, std::memory_order_release);
    os::futex_wake_all(slot.wake_seq);
  });
}

// ---- consumer ----

RelayConsumer::RelayConsumer(Pool& pool, uint32_t session) : pool_(pool), session_(session) {
  Pool::Shared& s = *pool_.shared();
  const uint32_t pid = static_cast<uint32_t>(getpid());
  if (session >= kMaxSessions ||
      (s.sessions_active.load(std::memory_order_acquire) & (1u << session)) == 0)
    throw Error("session " + std::to_string(session) + " is not in this pool");
  const uint32_t reader = pool_.reader_pid(session);
  // A released slot is freed by the feeder; with no live reader there is none to do it.
  const bool no_feeder = reader == 0 || !alive(reader);
  for (uint32_t i = 0; i < kRelaySlots; ++i) {
    RelaySlot& slot = *s.relay(i);
    uint64_t state = slot.state.load(std::memory_order_acquire);
    const uint8_t phase = relay_phase(state);
    // Another session's released or orphaned slot is reused only when that session's reader,
    // which would free it, is gone too.
    const uint32_t other = slot.session.load(std::memory_order_relaxed);
    const uint32_t other_reader =
        other == session ? reader : pool_.reader_pid(other % kMaxSessions);
    const bool feederless =
        other == session ? no_feeder : other_reader == 0 || !alive(other_reader);
    const bool reusable = phase == kRelayFree || (phase == kRelayReleased && feederless) ||
                          ((phase == kRelayRequested || phase == kRelayActive) &&
                           !alive(relay_pid(state)) && feederless);
    if (!reusable) continue;
    if (!slot.state.compare_exchange_strong(state, relay_state(kRelayClaiming, pid),
                                            std::memory_order_acq_rel))
      continue;
    slot.head.store(0, std::memory_order_relaxed);
    slot.tail.store(0, std::memory_order_relaxed);
    slot.lost_buffers.store(0, std::memory_order_relaxed);
    slot.lost_records.store(0, std::memory_order_relaxed);
    slot.lost_events.store(0, std::memory_order_relaxed);
    slot.ended.store(0, std::memory_order_relaxed);
    slot.consumer_sleeping.store(0, std::memory_order_relaxed);
    slot.session.store(session, std::memory_order_relaxed);
    slot.state.store(relay_state(kRelayRequested, pid), std::memory_order_release);
    s.relay_changes.fetch_add(1, std::memory_order_release);
    slot_ = i;
    pool_.wake_reader(session);  // The feeder may be asleep on the pool.
    return;
  }
  throw Error("session pool has no free relay slot (at most " + std::to_string(kRelaySlots) +
              " consuming processes besides the reader's)");
}

RelayConsumer::~RelayConsumer() {
  Pool::Shared& s = *pool_.shared();
  s.relay(slot_)->state.store(relay_state(kRelayReleased, static_cast<uint32_t>(getpid())),
                              std::memory_order_release);
  s.relay_changes.fetch_add(1, std::memory_order_release);
  pool_.wake_reader(session_);
}

bool RelayConsumer::active(uint64_t& since_ns) const {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  if (relay_phase(slot.state.load(std::memory_order_acquire)) != kRelayActive) return false;
  since_ns = slot.since_ns.load(std::memory_order_relaxed);
  return true;
}

size_t RelayConsumer::drain(const Reader::Callback& callback, const Reader::LossCallback& on_loss) {
  Pool::Shared& s = *pool_.shared();
  RelaySlot& slot = *s.relay(slot_);
  const std::byte* ring = s.relay_ring(slot_);
  uint64_t tail = slot.tail.load(std::memory_order_relaxed);
  const uint64_t head = slot.head.load(std::memory_order_acquire);
  size_t delivered = 0;
  while (tail < head) {
    const uint64_t pos = tail % kRelayRingBytes;
    EntryHeader h;
    std::memcpy(&h, ring + pos, sizeof h);
    if (h.size < sizeof h || pos + h.size > kRelayRingBytes) break;  // corrupt: stop here
    const std::byte* payload = ring + pos + sizeof h;
    if (h.kind == kEntryRecord) {
      RecordView view;
      size_t size = 0;
      if (decode_record(std::span<const std::byte>(payload, h.size - sizeof h), view, size)) {
        callback(view);
        ++delivered;
      }
    } else if (h.kind == kEntryMark) {
      Mark m;
      std::memcpy(&m, payload, sizeof m);
      const LossReport delta{m.buffers - reported_.realtime_buffers_lost,
                             m.records - reported_.realtime_events_lost,
                             m.events - reported_.events_lost};
      if ((delta.realtime_buffers_lost | delta.realtime_events_lost | delta.events_lost) != 0) {
        if (on_loss) on_loss(delta);
        reported_ = LossReport{m.buffers, m.records, m.events};
      }
    }
    tail += h.size;
  }
  slot.tail.store(tail, std::memory_order_release);
  delivered_ += delivered;
  return delivered;
}

bool RelayConsumer::ended(const Reader::LossCallback& on_loss) {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  if (slot.ended.load(std::memory_order_acquire) == 0) return false;
  if (slot.tail.load(std::memory_order_relaxed) != slot.head.load(std::memory_order_acquire))
    return false;
  const LossReport total{slot.lost_buffers.load(std::memory_order_relaxed),
                         slot.lost_records.load(std::memory_order_relaxed),
                         slot.lost_events.load(std::memory_order_relaxed)};
  const LossReport delta{total.realtime_buffers_lost - reported_.realtime_buffers_lost,
                         total.realtime_events_lost - reported_.realtime_events_lost,
                         total.events_lost - reported_.events_lost};
  if ((delta.realtime_buffers_lost | delta.realtime_events_lost | delta.events_lost) != 0) {
    if (on_loss) on_loss(delta);
    reported_ = total;
  }
  return true;
}

uint32_t RelayConsumer::prepare_wait() {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  const uint32_t token = slot.wake_seq.load(std::memory_order_acquire);
  slot.consumer_sleeping.store(1, std::memory_order_seq_cst);
  return token;
}

bool RelayConsumer::cancel_wait(uint32_t token) {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  slot.consumer_sleeping.store(0, std::memory_order_relaxed);
  return slot.wake_seq.load(std::memory_order_acquire) != token;
}

bool RelayConsumer::wait(uint32_t token, uint64_t timeout_ns) {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  const bool woken = os::futex_wait_change(slot.wake_seq, token, timeout_ns);
  slot.consumer_sleeping.store(0, std::memory_order_relaxed);
  return woken;
}

void RelayConsumer::nap(uint64_t timeout_ns) {
  RelaySlot& slot = *pool_.shared()->relay(slot_);
  (void)os::futex_wait_change(slot.wake_seq, slot.wake_seq.load(std::memory_order_acquire),
                              timeout_ns);
}

}  // namespace etwrt::dataplane
