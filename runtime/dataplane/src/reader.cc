// The reader: claims delivered buffers (and, on flush, holds buffers still being written to
// read their committed prefix), merges their records by timestamp, frees what it finished.
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <string>

#include "dataplane_layout.h"
#include "record_parse.h"
#include "etwrt_os.h"

namespace etwrt::dataplane {

namespace {

// Evicts a buffer's bytes from this core's caches once read, before the buffer goes back to
// the writers. Otherwise a consumer that keeps up holds every line of the few buffers in
// rotation, and each line a writer stores to must first be taken from this core: measured
// with writer and consumer on their own cores, EventWrite cost ~4x more (bench/README.md).
// CLFLUSHOPT where the CPU has it (CPUID.7.0:EBX[23]), else the older, ordered CLFLUSH.
void evict(const std::byte* bytes, uint32_t size) {
#if defined(__x86_64__)
  static const bool has_clflushopt = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & (1u << 23)) != 0;
  }();
  const auto* line = reinterpret_cast<const char*>(bytes);
  const auto* end = line + size;
  if (has_clflushopt) {
    for (; line < end; line += kCacheLine) asm volatile("clflushopt %0" : : "m"(*line));
  } else {
    for (; line < end; line += kCacheLine) asm volatile("clflush %0" : : "m"(*line));
  }
#else
  (void)bytes;
  (void)size;
#endif
}

}  // namespace

Reader::Reader(Pool& pool, ReaderOptions options, uint32_t session)
    : pool_(pool), options_(options), session_(session), bit_(1u << (session % kMaxSessions)) {
  Pool::Shared& s = *pool_.shared();
  if (session >= kMaxSessions || (s.sessions_active.load(std::memory_order_acquire) & bit_) == 0)
    throw Error("session " + std::to_string(session) + " is not in this pool");
  Pool::Shared::Session& b = s.session[session];
  const uint32_t pid = static_cast<uint32_t>(getpid());
  for (int attempt = 0;; ++attempt) {
    uint32_t expected = 0;
    if (b.reader_pid.compare_exchange_strong(expected, pid, std::memory_order_acq_rel)) break;
    // A dead reader is detached by recovery, once; a live one keeps the session.
    if (attempt == 0) {
      pool_.recover_dead_peers();
      continue;
    }
    throw Error("session already has a reader attached (pid " + std::to_string(expected) + ")");
  }
  s.supply_epoch.fetch_add(1, std::memory_order_release);  // reclaiming is possible now
  // Losses before attaching are reported at the first poll: the buffered events a first
  // consumer gets may already have a gap.
  last_flush_request_ = b.flush_requests.load(std::memory_order_acquire);
  last_flush_ns_ = pool_.now_ns();
}

Reader::~Reader() {
  Pool::Shared& s = *pool_.shared();
  // Unfinished buffers stay pending for the next reader of the session, from `consumed`.
  for (const Open& o : open_) {
    BufferDesc& d = s.descs()[o.index];
    const bool finished = phase_of(d.state.load(std::memory_order_acquire)) == kFull &&
                          o.cursor == bytes_of(d.commit.load(std::memory_order_acquire));
    let_go(o, finished);
  }
  s.session[session_].reader_pid.store(0, std::memory_order_release);
  s.supply_epoch.fetch_add(1, std::memory_order_release);
}

void Reader::let_go(const Open& o, bool finished) {
  Pool::Shared& s = *pool_.shared();
  BufferDesc& d = s.descs()[o.index];
  d.consumed[session_].store(pack_progress(o.events, o.cursor), std::memory_order_relaxed);
  // The last session done with it frees it.
  const MaskChange result = change_masks(
      s, o.index,
      [&](uint64_t, uint32_t& held, uint32_t& pending) {
        held &= ~bit_;
        if (finished) pending &= ~bit_;
        return true;
      },
      [&] { evict(s.data(o.index), o.cursor); });
  // Held no more, it may be reclaimed: a writer that found nothing looks again.
  if (result == MaskChange::changed) s.supply_epoch.fetch_add(1, std::memory_order_release);
}

bool Reader::flush_due(bool forced) {
  Pool::Shared& s = *pool_.shared();
  bool due = forced;
  const uint64_t requests = s.session[session_].flush_requests.load(std::memory_order_acquire);
  if (requests != last_flush_request_) {
    last_flush_request_ = requests;
    due = true;
  }
  const uint64_t now = pool_.now_ns();
  if (s.flush_timer_s != 0 && now - last_flush_ns_ >= uint64_t{s.flush_timer_s} * 1000000000ull)
    due = true;
  if (due) last_flush_ns_ = now;
  return due;
}

uint64_t Reader::claim(bool include_partial, bool unlimited) {
  Pool::Shared& s = *pool_.shared();
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  const auto is_open = [&](uint32_t index) {
    return std::any_of(open_.begin(), open_.end(), [&](const Open& o) { return o.index == index; });
  };
  const auto open = [&](uint32_t index) {
    if (is_open(index)) return;
    const uint64_t consumed = s.descs()[index].consumed[session_].load(std::memory_order_relaxed);
    open_.push_back(Open{index, bytes_of(consumed), events_of(consumed)});
  };
  full_.clear();
  for (uint32_t i = 0; i < allocated; ++i) {
    BufferDesc& d = s.descs()[i];
    uint64_t state = d.state.load(std::memory_order_acquire);
    // A buffer being written is held for its committed prefix; which sessions its records
    // are for is known only at its hand-off.
    while (phase_of(state) == kWriting && (held_of(state) & bit_) == 0 && include_partial) {
      if (d.state.compare_exchange_weak(state,
                                        with_masks(state, held_of(state) | bit_, pending_of(state)),
                                        std::memory_order_acquire)) {
        open(i);
        break;
      }
    }
    if (phase_of(state) == kFull && (pending_of(state) & bit_) != 0 && (held_of(state) & bit_) == 0)
      full_.push_back({d.handoff_seq.load(std::memory_order_relaxed), i});
  }
  // Delivered buffers are taken oldest first and only a few per poll: those left Full stay
  // reclaimable, so a slow consumer loses whole old buffers (RealTimeBuffersLost) instead of
  // holding every buffer and making writers drop new events.
  std::sort(full_.begin(), full_.end());
  size_t budget =
      (unlimited || options_.max_claim_per_poll == 0) ? full_.size() : options_.max_claim_per_poll;
  uint64_t cap = UINT64_MAX;
  for (const auto& [seq, index] : full_) {
    BufferDesc& d = s.descs()[index];
    if (budget > 0) {
      uint64_t state = d.state.load(std::memory_order_acquire);
      while (phase_of(state) == kFull && (pending_of(state) & bit_) != 0) {
        if (d.state.compare_exchange_weak(
                state, with_masks(state, held_of(state) | bit_, pending_of(state)),
                std::memory_order_acquire)) {
          open(index);
          --budget;
          break;
        }
      }
      continue;
    }
    // Not taken this poll: its first unread record may be older than records of the buffers
    // taken, so nothing newer than it is delivered now. The buffer may be reclaimed while
    // this is read; a stale value only delays or (counted) misorders delivery.
    const uint32_t from = bytes_of(d.consumed[session_].load(std::memory_order_relaxed));
    if (bytes_of(d.commit.load(std::memory_order_acquire)) <= from) continue;
    const std::byte* field = s.data(index) + from + offsetof(RecordHeader, timestamp_ns);
    cap = std::min(cap, std::atomic_ref<const uint64_t>(*reinterpret_cast<const uint64_t*>(field))
                            .load(std::memory_order_relaxed));
  }
  return cap;
}

bool Reader::take_losses(LossReport& since_last) {
  Pool::Shared& s = *pool_.shared();
  // A writer reclaiming a buffer (kStealing) counts its loss before it writes anything newer;
  // wait for that count (a few stores; bounded, in case the writer died there: recovery
  // counts it then), so that the loss is announced before the newer records it preceded.
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < allocated; ++i) {
    for (int spin = 0; spin < 1000; ++spin) {
      if (phase_of(s.descs()[i].state.load(std::memory_order_acquire)) != kStealing) break;
      sched_yield();
    }
  }
  const uint64_t reclaims = s.reclaims.load(std::memory_order_acquire);
  if (reclaims != seen_reclaims_) {
    const RealtimeLoss loss = reclaimed_loss(s, session_);
    reclaimed_ = {loss.buffers, loss.events};
    seen_reclaims_ = reclaims;
  }
  // The reader's own count (corrupt records) is added to what the reclaims lost.
  const Pool::Shared::Session& b = s.session[session_];
  const LossReport now{reclaimed_.buffers + b.realtime_buffers_lost.load(std::memory_order_relaxed),
                       reclaimed_.events + b.realtime_events_lost.load(std::memory_order_relaxed),
                       b.events_lost.load(std::memory_order_relaxed)};
  if (now.realtime_buffers_lost == reported_.realtime_buffers_lost &&
      now.realtime_events_lost == reported_.realtime_events_lost &&
      now.events_lost == reported_.events_lost) {
    return false;
  }
  since_last = LossReport{now.realtime_buffers_lost - reported_.realtime_buffers_lost,
                          now.realtime_events_lost - reported_.realtime_events_lost,
                          now.events_lost - reported_.events_lost};
  reported_ = now;
  return true;
}

namespace {

// poll()'s std::function form: each record decoded into a RecordView.
class ViewConsumer {
 public:
  ViewConsumer(const Reader::Callback& callback, const Reader::LossCallback& on_loss)
      : callback_(callback), on_loss_(on_loss) {}
  bool record(std::span<const std::byte> bytes) {
    ViewOut out{view_};
    if (!parse_framed(bytes, out)) return false;
    view_.encoded = bytes;
    callback_(view_);
    return true;
  }
  void loss(const LossReport& loss) {
    if (on_loss_) on_loss_(loss);
  }

 private:
  const Reader::Callback& callback_;
  const Reader::LossCallback& on_loss_;
  RecordView view_;
};

// poll()'s EventSink form: each record decoded straight into the EVENT_RECORD, by the parser
// inlined here (no call per record but the sink's).
class EventConsumer {
 public:
  explicit EventConsumer(EventSink& sink) : sink_(sink) {}
  bool record(std::span<const std::byte> bytes) {
    EventRecordWriter writer{out_};
    if (!parse_framed(bytes, writer)) return false;
    sink_.event(out_);
    return true;
  }
  void loss(const LossReport& loss) { sink_.loss(loss); }

 private:
  EventSink& sink_;
  EventRecordOut out_;
};

// poll()'s RecordSink form: each record validated, its fields left in place.
class StoredConsumer {
 public:
  explicit StoredConsumer(RecordSink& sink) : sink_(sink) {}
  bool record(std::span<const std::byte> bytes) {
    StoredOut out{record_};
    if (!parse_framed(bytes, out)) return false;
    sink_.record(record_);
    return true;
  }
  void loss(const LossReport& loss) { sink_.loss(loss); }

 private:
  RecordSink& sink_;
  StoredRecord record_;
};

}  // namespace

size_t Reader::poll(const Callback& callback, bool flush, const LossCallback& on_loss) {
  ViewConsumer consumer(callback, on_loss);
  return poll_into(consumer, flush);
}

size_t Reader::poll(EventSink& sink, bool flush) {
  EventConsumer consumer(sink);
  return poll_into(consumer, flush);
}

size_t Reader::poll(RecordSink& sink, bool flush) {
  StoredConsumer consumer(sink);
  return poll_into(consumer, flush);
}

template <typename Consumer>
size_t Reader::poll_into(Consumer& consumer, bool flush) {
  // The scan below is not a snapshot: while it runs (or while this process is preempted in
  // it), a writer may hand off a buffer at an index already passed and go on in one not yet
  // reached. Every record stamped before the scan started is, by the time it ends, in a
  // buffer this reader holds (or was reclaimed and counted), so only those are delivered
  // now; later ones wait for the next poll. That keeps each writer's records in order.
  const uint64_t scan_start = pool_.now_ns();
  const uint64_t cap = claim(options_.eager_partial || flush_due(flush), flush);
  // The margins keep this poll behind the writers' present, not behind the buffers left Full:
  // taken from that cap too, they left the tail of the last buffer taken unread at every poll
  // of a reader that is behind, and that buffer stayed held instead of freed.
  uint64_t watermark = scan_start;
  if (!flush) {
    const bool streaming = scan_start < streaming_until_ns_;
    const uint64_t margin =
        options_.hold_back_ns + (streaming ? options_.streaming_hold_back_ns : 0);
    watermark -= std::min(watermark, margin);
  }
  watermark = std::min(watermark, cap);

  const size_t delivered = deliver(consumer, watermark);
  if (delivered >= options_.streaming_records) {
    streaming_until_ns_ = scan_start + options_.streaming_window_ns;
  }
  pool_.shared()->session[session_].events_delivered.fetch_add(delivered,
                                                               std::memory_order_relaxed);
  free_finished();
  return delivered;
}

// Frames the record at the cursor; a record that does not frame makes the rest of what is
// committed unreadable: it is skipped and counted as lost, never guessed at.
bool Reader::load(Cursor& c) {
  const Open& o = open_[c.open];
  if (o.cursor >= c.limit) return false;
  if (frame_at(pool_.shared()->data(o.index) + o.cursor, c.limit - o.cursor, c.size,
               c.timestamp_ns)) {
    return true;
  }
  skip_corrupt(c);
  return false;
}

void Reader::skip_corrupt(Cursor& c) {
  Pool::Shared& s = *pool_.shared();
  Open& o = open_[c.open];
  ++corrupt_;
  // Past a record that does not frame, the rest cannot be told apart by session: all counted.
  s.session[session_].realtime_buffers_lost.fetch_add(1, std::memory_order_relaxed);
  s.session[session_].realtime_events_lost.fetch_add(c.limit_events - o.events,
                                                     std::memory_order_relaxed);
  o.cursor = c.limit;
  o.events = c.limit_events;
}

template <typename Consumer>
size_t Reader::deliver(Consumer& consumer, uint64_t watermark) {
  Pool::Shared& s = *pool_.shared();
  std::vector<Cursor>& heap = heap_;
  heap.clear();
  const auto later = [](const Cursor& a, const Cursor& b) {
    return a.timestamp_ns > b.timestamp_ns;
  };
  for (size_t i = 0; i < open_.size(); ++i) {
    const uint64_t commit = s.descs()[open_[i].index].commit.load(std::memory_order_acquire);
    Cursor c{static_cast<uint32_t>(i), bytes_of(commit), events_of(commit), 0, 0};
    if (load(c)) heap.push_back(c);
  }
  // Losses are read only now, after the scan and the commits above (acquire): every loss a
  // writer counted before it wrote a record delivered below is then announced ahead of that
  // record. Read before the scan, a buffer reclaimed meanwhile was announced one poll late,
  // after newer records (a gap no RT_LostEvent announced: seen under TSan's timing).
  if (LossReport loss; take_losses(loss)) consumer.loss(loss);
  std::make_heap(heap.begin(), heap.end(), later);

  size_t delivered = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor& c = heap.back();
    if (c.timestamp_ns > watermark) break;
    // Deliver a run from this buffer while it stays the oldest: one heap operation per run,
    // not per record (writers usually fill long runs of consecutive timestamps). The run's
    // state stays in locals: the sink's virtual call would otherwise make every record
    // reload and store it.
    const uint64_t run_limit =
        heap.size() > 1 ? std::min(watermark, heap.front().timestamp_ns) : watermark;
    Open& o = open_[c.open];
    const std::byte* const base = s.data(o.index);
    uint32_t cursor = o.cursor;
    uint32_t events = o.events;
    uint32_t size = c.size;
    uint64_t timestamp = c.timestamp_ns;
    uint64_t last = last_timestamp_;
    uint64_t inversions = inversions_;
    size_t own = 0;     // records of this session (the others are passed over)
    bool more = false;  // the cursor holds a framed record
    bool corrupt = false;
    do {
      const auto sessions =
          std::to_integer<uint32_t>(base[cursor + offsetof(RecordHeader, sessions)]);
      if ((sessions & bit_) != 0) {
        if (!consumer.record(std::span<const std::byte>(base + cursor, size))) {
          corrupt = true;
          break;
        }
        ++own;
        inversions += timestamp < last ? 1 : 0;
        last = std::max(last, timestamp);
      }
      cursor += size;
      ++events;
      more = cursor < c.limit;
      if (more && !frame_at(base + cursor, c.limit - cursor, size, timestamp)) {
        corrupt = true;
        break;
      }
    } while (more && timestamp <= run_limit);
    delivered += own;
    o.cursor = cursor;
    o.events = events;
    last_timestamp_ = last;
    inversions_ = inversions;
    if (corrupt) {
      skip_corrupt(c);
      heap.pop_back();
    } else if (more) {
      c.size = size;
      c.timestamp_ns = timestamp;
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  return delivered;
}

void Reader::free_finished() {
  Pool::Shared& s = *pool_.shared();
  // Publish progress and let go of what is finished: a buffer is finished when its writer
  // handed it over (Full) and everything it committed was read.
  std::erase_if(open_, [&](const Open& o) {
    BufferDesc& d = s.descs()[o.index];
    d.consumed[session_].store(pack_progress(o.events, o.cursor), std::memory_order_relaxed);
    if (phase_of(d.state.load(std::memory_order_acquire)) != kFull) return false;
    if (o.cursor != bytes_of(d.commit.load(std::memory_order_acquire))) return false;
    let_go(o, true);
    return true;
  });
}

uint32_t Reader::prepare_wait() {
  Pool::Shared& s = *pool_.shared();
  const uint32_t token = s.session[session_].wake_seq.load(std::memory_order_acquire);
  // seq_cst: the poll that follows must see every commit made before a writer could have
  // read the bit clear.
  s.readers_sleeping.fetch_or(bit_, std::memory_order_seq_cst);
  return token;
}

bool Reader::cancel_wait(uint32_t token) {
  Pool::Shared& s = *pool_.shared();
  s.readers_sleeping.fetch_and(~bit_, std::memory_order_relaxed);
  return s.session[session_].wake_seq.load(std::memory_order_acquire) != token;
}

bool Reader::wait(uint32_t token, uint64_t timeout_ns) {
  Pool::Shared& s = *pool_.shared();
  const bool woken = os::futex_wait_change(s.session[session_].wake_seq, token, timeout_ns);
  s.readers_sleeping.fetch_and(~bit_, std::memory_order_relaxed);
  return woken;
}

void Reader::nap(uint64_t timeout_ns) {
  std::atomic<uint32_t>& seq = pool_.shared()->session[session_].wake_seq;
  (void)os::futex_wait_change(seq, seq.load(std::memory_order_acquire), timeout_ns);
}

}  // namespace etwrt::dataplane
