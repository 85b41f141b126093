// etwrt: the realtime consumer API (OpenTraceA, ProcessTrace, CloseTrace). OpenTraceA maps the
// session's pool (its fd comes from the broker). A pool has one dataplane Reader; in this
// process a hub thread per pool owns it and fans its records out to every ProcessTrace
// consuming that session (the first gets what was buffered, later ones only new events).
// ProcessTrace turns them into EVENT_RECORDs (or classic EVENT_TRACEs), after the synthetic
// header event and with RT_LostEvent pseudo-events ahead of the data that follows a loss.
#include "client.h"
#include "replies.h"
#include "trace_properties.h"
#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#include <algorithm>
#endif

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {

using json = nlohmann::json;
using etwrt::Client;
using etwrt::SessionPool;
namespace dataplane = etwrt::dataplane;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;
constexpr ULONG kMaxHandles = 64;  // ProcessTrace: at most 64 handles (MAXIMUM_WAIT_OBJECTS).
// 100 ns intervals from 1601-01-01 (FILETIME) to 1970-01-01.
constexpr std::int64_t kUnixEpochAsFileTime = 116444736000000000LL;

struct Consumer {
  EVENT_TRACE_LOGFILEA* logfile = nullptr;  // The caller's, valid until CloseTrace (as on Windows).
  SessionPool* pool = nullptr;
  TRACE_LOGFILE_HEADER header{};  // ReservedFlags: the session's clock (ClientContext).
  bool processing = false;        // Guarded by g_mu.
  bool closed = false;            // Guarded by g_mu; CloseTrace during ProcessTrace.
  std::atomic<bool> close_requested{false};
};

std::mutex g_mu;
std::set<Consumer*> g_consumers;

Consumer* find_locked(TRACEHANDLE handle) {
  auto* c = reinterpret_cast<Consumer*>(static_cast<std::uintptr_t>(handle));
  return g_consumers.contains(c) ? c : nullptr;
}

std::int64_t realtime_minus_monotonic_ns() {
  timespec real{};
  timespec mono{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  return (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
}

// Delivers one consumer's events: owns the conversion state of one ProcessTrace call.
class Delivery {
 public:
  explicit Delivery(Consumer& c) : c_(c), offset_ns_(realtime_minus_monotonic_ns()) {}

  bool event_record_mode() const {
    return (c_.logfile->ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) != 0;
  }

  std::int64_t file_time(std::uint64_t monotonic_ns) const {
    return kUnixEpochAsFileTime + (static_cast<std::int64_t>(monotonic_ns) + offset_ns_) / 100;
  }

  // FILETIME by default; with PROCESS_TRACE_MODE_RAW_TIMESTAMP, the session's clock (the
  // header's ReservedFlags = ClientContext): QPC ticks at PerfFreq, system time as FILETIME,
  // cycles at CpuSpeedInMHz (WNODE_HEADER page, rule CON-CLOCK).
  std::int64_t timestamp(std::uint64_t monotonic_ns) const {
    if ((c_.logfile->ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) == 0) {
      return file_time(monotonic_ns);
    }
    switch (c_.header.ReservedFlags) {
      case etwrt::kClockSystemTime: return file_time(monotonic_ns);
      case etwrt::kClockCpuCycles:
        return static_cast<std::int64_t>(monotonic_ns);               // A 1000 MHz counter.
      default: return static_cast<std::int64_t>(monotonic_ns / 100);  // QPC at 10 MHz.
    }
  }

  // An event's TimeStamp. A Type 3 descriptor's override (tracelogging.h) is a value of the
  // session's clock: given as is with RAW_TIMESTAMP, else converted from that clock.
  std::int64_t event_time(const dataplane::RecordView& v) const {
    if (!v.has_timestamp_override) return timestamp(v.timestamp_ns);
    const auto raw = static_cast<std::uint64_t>(v.timestamp_override);
    if ((c_.logfile->ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) != 0 ||
        c_.header.ReservedFlags == etwrt::kClockSystemTime) {
      return static_cast<std::int64_t>(raw);
    }
    return file_time(c_.header.ReservedFlags == etwrt::kClockCpuCycles ? raw : raw * 100);
  }

  // ProcessTrace's StartTime and EndTime (FILETIMEs; NULL: no bound).
  void set_window(const FILETIME* start, const FILETIME* end) {
    if (start != nullptr) window_start_ = file_time_value(*start);
    if (end != nullptr) window_end_ = file_time_value(*end);
    windowed_ = start != nullptr || end != nullptr;
  }
  bool in_window(std::uint64_t monotonic_ns) const {
    if (!windowed_) return true;  // The usual case: no conversion per event.
    const std::int64_t t = file_time(monotonic_ns);
    return t >= window_start_ && t <= window_end_;
  }

  // The synthetic first event: EventTraceGuid, Opcode 0, a TRACE_LOGFILE_HEADER as UserData.
  void header_event() {
    TRACE_LOGFILE_HEADER header = c_.header;
    emit_synthetic(EventTraceGuid, EVENT_TRACE_TYPE_INFO, now(), &header, sizeof header, true);
  }

  // RT_LostEvent (etwrt choice for the payload: the counts, as ULONG64s, since no document
  // gives one): RTLostBuffer (33) = {buffers, events they held}, RTLostEvent (32) = {events}.
  void losses(const dataplane::LossReport& loss) {
    if (loss.realtime_buffers_lost > 0) {
      const std::uint64_t counts[2] = {loss.realtime_buffers_lost, loss.realtime_events_lost};
      emit_synthetic(RTLostEventGuid, 33, now(), counts, sizeof counts, false);
    }
    if (loss.events_lost > 0) {
      const std::uint64_t counts[1] = {loss.events_lost};
      emit_synthetic(RTLostEventGuid, 32, now(), counts, sizeof counts, false);
    }
  }

  void record(const dataplane::RecordView& v) {
    if (!event_record_mode()) {
      classic(v.provider_id, v.descriptor, event_time(v), v.process_id, v.thread_id,
              v.user_data.data(), v.user_data.size());
      return;
    }
    EVENT_RECORD r{};
    r.EventHeader.Size = sizeof(EVENT_HEADER);
    r.EventHeader.Flags = static_cast<USHORT>(v.flags | EVENT_HEADER_FLAG_64_BIT_HEADER);
    r.EventHeader.ThreadId = v.thread_id;
    r.EventHeader.ProcessId = v.process_id;
    r.EventHeader.TimeStamp.QuadPart = event_time(v);
    r.EventHeader.ProviderId = v.provider_id;
    r.EventHeader.EventDescriptor = v.descriptor;
    r.EventHeader.ActivityId = v.activity_id;
    EVENT_HEADER_EXTENDED_DATA_ITEM items[3] = {};
    USHORT count = 0;
    if (v.has_related_activity_id) {
      items[count].ExtType = EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID;
      items[count].DataSize = sizeof(GUID);
      items[count].DataPtr = reinterpret_cast<ULONGLONG>(&v.related_activity_id);
      ++count;
    }
    if (!v.provider_traits.empty()) {
      items[count].ExtType = EVENT_HEADER_EXT_TYPE_PROV_TRAITS;
      items[count].DataSize = static_cast<USHORT>(v.provider_traits.size());
      items[count].DataPtr = reinterpret_cast<ULONGLONG>(v.provider_traits.data());
      ++count;
    }
    if (!v.event_schema.empty()) {
      items[count].ExtType = EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL;
      items[count].DataSize = static_cast<USHORT>(v.event_schema.size());
      items[count].DataPtr = reinterpret_cast<ULONGLONG>(v.event_schema.data());
      ++count;
    }
    if (count > 0) {
      r.EventHeader.Flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
      r.ExtendedData = items;
      r.ExtendedDataCount = count;
    }
    r.UserDataLength = static_cast<USHORT>(v.user_data.size());
    r.UserData = const_cast<std::byte*>(v.user_data.data());
    r.UserContext = c_.logfile->Context;
    if (c_.logfile->EventRecordCallback != nullptr) c_.logfile->EventRecordCallback(&r);
  }

 private:
  // The synthetic events' time, in the clock the records use.
  std::int64_t now() const { return timestamp(c_.pool->pool.now_ns()); }

  static std::int64_t file_time_value(const FILETIME& t) {
    return static_cast<std::int64_t>((std::uint64_t{t.dwHighDateTime} << 32) | t.dwLowDateTime);
  }

  void emit_synthetic(const GUID& provider, UCHAR opcode, std::int64_t time, const void* data,
                      std::size_t size, bool classic_header) {
    EVENT_DESCRIPTOR d{};
    d.Opcode = opcode;
    if (!event_record_mode()) {
      classic(provider, d, time, 0, 0, data, size);
      return;
    }
    EVENT_RECORD r{};
    r.EventHeader.Size = sizeof(EVENT_HEADER);
    r.EventHeader.Flags =
        EVENT_HEADER_FLAG_64_BIT_HEADER | (classic_header ? EVENT_HEADER_FLAG_CLASSIC_HEADER : 0);
    r.EventHeader.TimeStamp.QuadPart = time;
    r.EventHeader.ProviderId = provider;
    r.EventHeader.EventDescriptor = d;
    r.UserDataLength = static_cast<USHORT>(size);
    r.UserData = const_cast<void*>(data);
    r.UserContext = c_.logfile->Context;
    if (c_.logfile->EventRecordCallback != nullptr) c_.logfile->EventRecordCallback(&r);
  }

  // The classic form (EventCallback without PROCESS_TRACE_MODE_EVENT_RECORD).
  void classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time, ULONG pid,
               ULONG tid, const void* data, std::size_t size) {
    EVENT_TRACE t{};
    const std::size_t total = sizeof(EVENT_TRACE_HEADER) + size;
    t.Header.Size = static_cast<USHORT>(total > 0xffff ? 0xffff : total);
    t.Header.Class.Type = d.Opcode;
    t.Header.Class.Level = d.Level;
    t.Header.Class.Version = d.Version;
    t.Header.ThreadId = tid;
    t.Header.ProcessId = pid;
    t.Header.TimeStamp.QuadPart = time;
    t.Header.Guid = provider;
    t.MofData = const_cast<void*>(data);
    t.MofLength = static_cast<ULONG>(size);
    if (c_.logfile->EventCallback != nullptr) c_.logfile->EventCallback(&t);
  }

  Consumer& c_;
  std::int64_t offset_ns_;
  std::int64_t window_start_ = INT64_MIN;
  std::int64_t window_end_ = INT64_MAX;
  bool windowed_ = false;
};

// Records copied out of the pool (a view is valid only inside the reader's callback), in
// one arena per poll, shared read-only by every subscriber: no allocation per record. Each
// record is kept as the pool encodes it (one copy) and decoded again when delivered: copying
// the decoded view and its three spans cost the hub more than the copy of the record itself.
struct Batch {
  // A record's offset in `arena`, or kLoss | the index of a loss report in `losses`.
  static constexpr std::uint64_t kLoss = std::uint64_t{1} << 63;
  std::vector<std::uint64_t> entries;
  std::vector<std::byte> arena;
  std::vector<dataplane::LossReport> losses;
  std::size_t records = 0;

  void add(const dataplane::RecordView& v) {
    entries.push_back(arena.size());
    arena.insert(arena.end(), v.encoded.begin(), v.encoded.end());
    ++records;
  }
  void add(const dataplane::LossReport& loss) {
    entries.push_back(kLoss | losses.size());
    losses.push_back(loss);
  }
  static bool is_loss(std::uint64_t entry) { return (entry & kLoss) != 0; }
  const dataplane::LossReport& loss(std::uint64_t entry) const { return losses[entry & ~kLoss]; }
  // False only if the copy does not decode, which the reader checked in the pool already.
  bool view(std::uint64_t entry, dataplane::RecordView& v) const {
    std::size_t size = 0;
    return dataplane::decode_record(
        std::span<const std::byte>(arena.data() + entry, arena.size() - entry), v, size);
  }
};
using BatchPtr = std::shared_ptr<const Batch>;

// One ProcessTrace handle's place at its pool's hub. Guarded by the hub's mutex.
struct Subscriber {
  std::deque<BatchPtr> queue;
  std::size_t queued_records = 0;
  std::uint64_t since_ns = 0;  // Records stamped before it joined are not its own.
  bool ended = false;          // The session stopped and everything was queued.
  // ProcessTrace's status once the queue is taken: the pool could not be read (another
  // process reads it), or the session's broker died.
  ULONG error = ERROR_SUCCESS;
};

// Bounds what a slow consumer holds in memory: the hub waits, the pool fills, and the loss
// is the pool's (counted and reported), as with ETW's own buffers.
constexpr std::size_t kQueueLimit = 256;

class Hub {
 public:
  explicit Hub(SessionPool* pool) : pool_(pool) {
    thread_ = std::thread([this] { run(); });
    thread_.detach();  // Lives as long as the process maps the pool.
  }

  void join(Subscriber* s) {
    std::unique_lock lock(mu_);
    // The subscriber that makes the hub attach the pool's reader gets what the session
    // buffered; later ones only what is written from now on (CON-RT-SECOND). In a process fed
    // by another one's reader (a relay), only what is written once the feed started.
    s->since_ns = mode_ == Mode::detached ? 0 : pool_->pool.now_ns();
    if (mode_ == Mode::relay) s->since_ns = std::max(s->since_ns, relay_since_);
    if (finished_) end_locked(s);
    subs_.push_back(s);
    cv_.notify_all();
    pool_->pool.wake_reader();  // The hub may sleep on the pool's futex.
    // Returns once the hub reads the session (or failed to): a consumer that got its header
    // event gets every event written after it.
    cv_.wait_for(lock, kAttachLimit,
                 [&] { return mode_ != Mode::detached || s->ended || s->error != ERROR_SUCCESS; });
  }

  void leave(Subscriber* s) {
    std::lock_guard lock(mu_);
    std::erase(subs_, s);
    cv_.notify_all();
  }

  // Takes what is queued for `s` (waiting a little when nothing is); false once it ended.
  bool take(Subscriber* s, std::deque<BatchPtr>& out) {
    std::unique_lock lock(mu_);
    if (s->queue.empty() && !s->ended && s->error == ERROR_SUCCESS) {
      cv_.wait_for(lock, 5ms);
    }
    out.swap(s->queue);
    s->queue.clear();
    s->queued_records = 0;
    cv_.notify_all();  // Room again for the hub.
    return !(s->ended && out.empty()) && s->error == ERROR_SUCCESS;
  }

 private:
  // detached: nobody listens here. reader: this process holds the pool's one Reader (and
  // feeds the relay slots of other consuming processes). relay: another process holds it
  // and feeds this one through a relay slot (dataplane RelayConsumer).
  enum class Mode { detached, reader, relay };

  void run() {
    std::shared_ptr<Batch> held;  // Last poll's records, waiting for this poll's losses.
    for (;;) {
      bool stopped = pool_->stopped.load(std::memory_order_acquire);
      {
        std::unique_lock lock(mu_);
        // Nobody listens here (and no other process is fed from here): detach, so unread
        // records wait for the next consumer.
        while (subs_.empty() && !stopped && !(feeder_ && feeder_->refresh(pool_->pool.now_ns()))) {
          if (mode_ != Mode::detached) {
            held.reset();  // Read while their consumers listened; they left first.
            lock.unlock();
            detach();
            lock.lock();
            continue;
          }
          cv_.wait_for(lock, 50ms);
          stopped = pool_->stopped.load(std::memory_order_acquire);
        }
        if (subs_.empty() && stopped && mode_ != Mode::reader) {
          finished_ = true;
          return;
        }
        // A slow consumer holds the hub back (bounded memory; the pool takes the loss).
        while (!subs_.empty() && full_locked()) cv_.wait_for(lock, 5ms);
      }
      if (mode_ == Mode::detached && !attach()) continue;
      if (mode_ == Mode::relay) {
        if (relay_step(stopped)) return;
        continue;
      }
      // The feed of a relay slot activated now starts with this poll's records.
      feeder_->refresh(pool_->pool.now_ns());
      auto records = std::make_shared<Batch>();
      // Sized like the last poll's: growing them record by record cost the hub ~6% of its
      // time (perf) on a busy session.
      records->entries.reserve(last_entries_);
      records->arena.reserve(last_arena_);
      auto losses = std::make_shared<Batch>();
      const auto on_record = [&records](const dataplane::RecordView& v) { records->add(v); };
      const auto on_loss = [&losses](const dataplane::LossReport& loss) { losses->add(loss); };
      std::size_t n = reader_->poll(on_record, stopped, on_loss);
      last_entries_ = records->entries.size();
      last_arena_ = records->arena.size();
      if (stopped) {
        // The session is gone: everything committed, then the end.
        while (n > 0) n = reader_->poll(on_record, true, on_loss);
      }
      // A poll's records wait for the next poll's loss report: a writer may reclaim a buffer
      // (and count it) while a poll runs, after that poll took its report, so the report of
      // a gap can come one poll after the records that follow the gap. Held one poll, those
      // records still come after the report (RT_LostEvent ahead of the data after a gap).
      const bool idle = records->entries.empty() && losses->entries.empty();
      std::vector<BatchPtr> out;
      if (!losses->entries.empty()) out.push_back(losses);
      if (held && !held->entries.empty()) out.push_back(held);
      held.reset();
      if (stopped) {
        if (!records->entries.empty()) out.push_back(records);
      } else {
        held = records;
      }
      feed(out, stopped);
      {
        std::lock_guard lock(mu_);
        for (Subscriber* s : subs_) {
          for (const BatchPtr& b : out) {
            s->queue.push_back(b);
            s->queued_records += b->records;
          }
          if (stopped) end_locked(s);
        }
        if (stopped) {
          finished_ = true;
          subs_.clear();
          cv_.notify_all();
          return;  // The reader detaches with the process; nothing more will come.
        }
        if (!out.empty()) cv_.notify_all();
      }
      idle_step(*reader_, idle);
    }
  }

  // The pool's reader if nobody else holds it, else a relay slot fed by whoever does.
  bool attach() {
    try {
      dataplane::ReaderOptions options;
      options.eager_partial = true;  // Realtime: deliver as soon as committed.
      reader_ = std::make_unique<dataplane::Reader>(pool_->pool, options);
      feeder_ = std::make_unique<dataplane::RelayFeeder>(pool_->pool);
      set_mode(Mode::reader, 0);
      return true;
    } catch (const dataplane::Error&) {
      // Another live process reads the session: be fed by it.
    }
    try {
      relay_ = std::make_unique<dataplane::RelayConsumer>(pool_->pool);
      relay_requested_ns_ = pool_->pool.now_ns();
      return relay_wait_active();
    } catch (const dataplane::Error& e) {
      std::fprintf(stderr, "etwrt: ProcessTrace: %s\n", e.what());
      fail_all(ERROR_BUSY);
      return false;
    }
  }

  // The feeder activates the slot at its next loop (it is woken for that).
  bool relay_wait_active() {
    for (;;) {
      std::uint64_t since = 0;
      if (relay_->active(since)) {
        set_mode(Mode::relay, since);
        return true;
      }
      if (!reader_alive() || pool_->pool.now_ns() - relay_requested_ns_ > kRelayActivationNs) {
        // The reader went away (take its place next time) or never answers.
        relay_.reset();
        if (pool_->pool.now_ns() - relay_requested_ns_ > kRelayActivationNs) {
          std::fprintf(stderr,
                       "etwrt: ProcessTrace: the session's reading process does not feed"
                       " this one\n");
          fail_all(ERROR_BUSY);
        }
        return false;
      }
      std::this_thread::sleep_for(100us);
    }
  }

  // One step of a relayed consumer: what the ring holds, to the subscribers. Returns true
  // when the feed ended (the session stopped) and the hub is finished.
  bool relay_step(bool stopped) {
    auto batch = std::make_shared<Batch>();
    const auto on_record = [&batch](const dataplane::RecordView& v) { batch->add(v); };
    const auto on_loss = [&batch](const dataplane::LossReport& loss) { batch->add(loss); };
    relay_->drain(on_record, on_loss);
    bool ended = relay_->ended(on_loss);
    bool orphan = false;
    if (!ended && !reader_alive()) {
      // The feeding process is gone: drain what it left, then read the pool itself (the
      // dead reader's claims went back to delivery; the subscribers keep their since).
      relay_->drain(on_record, on_loss);
      orphan = true;
    }
    if (!ended && stopped) {
      if (stopped_seen_ns_ == 0) stopped_seen_ns_ = pool_->pool.now_ns();
      // The feeder drains the session and ends the feed; bounded in case it never does.
      ended = pool_->pool.now_ns() - stopped_seen_ns_ > kRelayActivationNs;
    }
    const bool idle = batch->entries.empty();
    {
      std::lock_guard lock(mu_);
      for (Subscriber* s : subs_) {
        if (!idle) {
          s->queue.push_back(batch);
          s->queued_records += batch->records;
        }
        if (ended) end_locked(s);
      }
      if (ended) {
        finished_ = true;
        subs_.clear();
        cv_.notify_all();
        relay_.reset();
        return true;
      }
      if (!idle) cv_.notify_all();
    }
    if (orphan) {
      relay_.reset();
      std::lock_guard lock(mu_);
      mode_ = Mode::detached;  // The next loop attaches the reader; since values stay.
      return false;
    }
    idle_step(*relay_, idle);
    return false;
  }

  bool reader_alive() const {
    const std::uint32_t pid = pool_->pool.reader_pid();
    return pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
  }

  // Hands what this process's reader delivers to the processes it feeds.
  void feed(const std::vector<BatchPtr>& out, bool stopped) {
    if (feeder_->active() > 0) {
      for (const BatchPtr& b : out) {
        dataplane::RecordView v;
        for (const std::uint64_t e : b->entries) {
          if (Batch::is_loss(e)) {
            feeder_->push_loss(b->loss(e));
          } else if (b->view(e, v)) {
            feeder_->push(v);
          }
        }
      }
      if (!out.empty()) feeder_->wake();
    }
    if (stopped) feeder_->end();
  }

  void set_mode(Mode mode, std::uint64_t relay_since) {
    std::lock_guard lock(mu_);
    mode_ = mode;
    relay_since_ = relay_since;
    if (mode == Mode::relay) {
      for (Subscriber* s : subs_) s->since_ns = std::max(s->since_ns, relay_since);
    }
    cv_.notify_all();
  }

  // The session ended and everything was queued: ProcessTrace returns once it took the rest,
  // with ERROR_SUCCESS after a stop, kBrokerLostStatus when the broker died instead.
  void end_locked(Subscriber* s) {
    s->ended = true;
    if (pool_->broker_lost.load(std::memory_order_acquire)) s->error = etwrt::kBrokerLostStatus;
  }

  void fail_all(ULONG error) {
    std::lock_guard lock(mu_);
    for (Subscriber* s : subs_) s->error = error;
    subs_.clear();
    cv_.notify_all();
  }

  void detach() {
    armed_ = false;
    idle_polls_ = 0;
    relay_.reset();
    feeder_.reset();  // Only when it feeds nobody (run()'s loop).
    reader_.reset();
    std::lock_guard lock(mu_);
    mode_ = Mode::detached;
  }

  // Nothing came: poll again for a short while (a stream with small gaps never sleeps), then
  // announce the sleep (dataplane Reader::prepare_wait), poll once more (what raced with the
  // announcement is seen there), and only if that poll is empty too, sleep on the pool's
  // futex until the next commit wakes it. The timeout bounds a wake-up missed by the
  // writers' unfenced flag check and how late the hub sees a subscriber leave; the session's
  // stop and a new subscriber wake it at once.
  // `waiter`: the pool's Reader, or for a relayed consumer its slot's RelayConsumer (whose
  // futex the feeder wakes per batch); both announce, cancel and wait the same way.
  template <typename Waiter>
  void idle_step(Waiter& waiter, bool idle) {
    if (!idle) {
      idle_polls_ = 0;
      if (armed_) waiter.cancel_wait();
      armed_ = false;
      return;
    }
    if (armed_) {
      armed_ = false;
      idle_polls_ = 0;
      (void)waiter.wait(token_, kIdleWaitNs);
      return;
    }
    if (spinning()) return;
    token_ = waiter.prepare_wait();
    armed_ = true;
  }

  bool spinning() {
    const std::uint64_t now = pool_->pool.now_ns();
    if (idle_polls_++ == 0) idle_since_ns_ = now;
    if (now - idle_since_ns_ >= kSpinNs) return false;
    for (int i = 0; i < 16; ++i) __builtin_ia32_pause();
    return true;
  }

  bool full_locked() const {
    for (const Subscriber* s : subs_) {
      if (s->queued_records >= kQueueLimit) return true;
    }
    return false;
  }

  // How long the hub keeps polling an idle pool before it sleeps, and its longest sleep.
  static constexpr std::uint64_t kSpinNs = 20'000;
  static constexpr std::uint64_t kIdleWaitNs = 2'000'000;
  static constexpr std::uint64_t kRelayActivationNs = 5'000'000'000;
  static constexpr auto kAttachLimit = 6s;

  // The hub thread's own.
  std::unique_ptr<dataplane::Reader> reader_;
  std::unique_ptr<dataplane::RelayFeeder> feeder_;
  std::unique_ptr<dataplane::RelayConsumer> relay_;
  std::uint64_t relay_requested_ns_ = 0;
  std::uint64_t stopped_seen_ns_ = 0;
  int idle_polls_ = 0;
  std::size_t last_entries_ = 0;  // what the last poll's batch held
  std::size_t last_arena_ = 0;
  std::uint64_t idle_since_ns_ = 0;
  bool armed_ = false;
  std::uint32_t token_ = 0;

  SessionPool* pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Subscriber*> subs_;
  Mode mode_ = Mode::detached;     // Guarded by mu_ (written by the hub thread).
  std::uint64_t relay_since_ = 0;  // Guarded by mu_.
  bool finished_ = false;
  std::thread thread_;
};

std::mutex g_hubs_mu;
std::map<SessionPool*, Hub*> g_hubs;  // Never freed, like the pools they read.

Hub& hub_of(SessionPool* pool) {
  std::lock_guard lock(g_hubs_mu);
  Hub*& hub = g_hubs[pool];
  if (hub == nullptr) hub = new Hub(pool);
  return *hub;
}

void fill_header(Consumer& c, const json& p) {
  TRACE_LOGFILE_HEADER& h = c.header;
  h.BufferSize = p.at("buffer_size").get<ULONG>() * 1024;
  h.VersionDetail.MajorVersion = 10;
  h.ProviderVersion = 0;
  h.NumberOfProcessors = static_cast<ULONG>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  h.TimerResolution = 156001;  // 100-ns units, as Windows reports its default tick.
  h.MaximumFileSize = p.at("maximum_file_size").get<ULONG>();
  h.LogFileMode = p.at("log_file_mode").get<ULONG>();
  h.BuffersWritten = p.at("buffers_written").get<ULONG>();
  h.PointerSize = sizeof(void*);
  h.EventsLost = p.at("events_lost").get<ULONG>();
  h.PerfFreq.QuadPart = etwrt::kQpcFrequency;
  h.CpuSpeedInMHz = etwrt::kCpuSpeedMHz;
  h.ReservedFlags = p.at("client_context").get<ULONG>();
  h.StartTime.QuadPart = p.at("start_time").get<std::int64_t>();
  h.BootTime.QuadPart = kUnixEpochAsFileTime;
}

// OpenTraceA's work; throws only on faults of its own (memory, threads), not on a bad reply.
TRACEHANDLE open_trace(PEVENT_TRACE_LOGFILEA Logfile) {
  // etwrt delivers realtime sessions only; log files are not written (ERROR_NOT_SUPPORTED).
  if ((Logfile->ProcessTraceMode & PROCESS_TRACE_MODE_REAL_TIME) == 0 ||
      Logfile->LoggerName == nullptr) {
    return INVALID_PROCESSTRACE_HANDLE;
  }
  Client& client = Client::instance();
  etwrt::ClientReply reply =
      client.call({{"op", "open"}, {"name", Logfile->LoggerName}}, kCallLimit);
  // The descriptor, if the reply brought one, is ours to close whatever else the reply says.
  const auto fd_field = reply.body.find("fd");
  const int fd =
      fd_field != reply.body.end() && fd_field->is_number_integer() ? fd_field->get<int>() : -1;
  const ULONG status = etwrt::reply_status(reply, "OpenTraceA");
  const auto pool_field = reply.body.find("pool");
  auto consumer = std::make_unique<Consumer>();
  consumer->logfile = Logfile;
  try {
    if (status != ERROR_SUCCESS || fd < 0) throw std::runtime_error("no session to open");
    if (pool_field == reply.body.end() || !pool_field->is_number_unsigned()) {
      throw std::runtime_error("the broker's reply names no pool");
    }
    fill_header(*consumer, reply.body.at("properties"));
  } catch (const std::exception& e) {
    if (status == ERROR_SUCCESS) std::fprintf(stderr, "etwrt: OpenTraceA: %s\n", e.what());
    if (fd >= 0) ::close(fd);
    return INVALID_PROCESSTRACE_HANDLE;
  }
  consumer->pool = client.adopt_pool(pool_field->get<std::uint64_t>(), fd);
  if (consumer->pool == nullptr) return INVALID_PROCESSTRACE_HANDLE;
  Logfile->LogfileHeader = consumer->header;
  Logfile->BufferSize = consumer->header.BufferSize;
  Logfile->IsKernelTrace = 0;
  std::lock_guard lock(g_mu);
  Consumer* c = consumer.release();
  g_consumers.insert(c);
  return reinterpret_cast<TRACEHANDLE>(c);
}

// ProcessTrace's argument checks, as its page lists them: HandleArray NULL ->
// ERROR_INVALID_PARAMETER; HandleCount 0 or above 64 -> ERROR_BAD_LENGTH; EndTime before
// StartTime -> ERROR_INVALID_TIME (the order is etwrt's choice; the page gives none).
ULONG check_process_trace(const TRACEHANDLE* handles, ULONG count, const FILETIME* start,
                          const FILETIME* end) {
  if (handles == nullptr) return ERROR_INVALID_PARAMETER;
  if (count == 0 || count > kMaxHandles) return ERROR_BAD_LENGTH;
  const auto value = [](const FILETIME& t) {
    return (std::uint64_t{t.dwHighDateTime} << 32) | t.dwLowDateTime;
  };
  if (start != nullptr && end != nullptr && value(*end) < value(*start)) return ERROR_INVALID_TIME;
  return ERROR_SUCCESS;
}

// Marks the handles' consumers as processing: ERROR_INVALID_HANDLE for an unknown handle or
// one already in a ProcessTrace; ERROR_WMI_ALREADY_ENABLED when they name more than one
// realtime session (the page: "only one real-time trace session"). Nothing stays marked on
// failure.
ULONG claim_consumers(const TRACEHANDLE* handles, ULONG count, std::vector<Consumer*>& out) {
  std::lock_guard lock(g_mu);
  ULONG status = ERROR_SUCCESS;
  for (ULONG i = 0; i < count && status == ERROR_SUCCESS; ++i) {
    Consumer* c = find_locked(handles[i]);
    if (c == nullptr || c->processing) {
      status = ERROR_INVALID_HANDLE;
    } else if (!out.empty() && c->pool != out.front()->pool) {
      status = ERROR_WMI_ALREADY_ENABLED;  // Every etwrt session consumed here is realtime.
    } else {
      c->processing = true;
      out.push_back(c);
    }
  }
  if (status != ERROR_SUCCESS) {
    for (Consumer* taken : out) taken->processing = false;
    out.clear();
  }
  return status;
}

}  // namespace

extern "C" {

TRACEHANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile) {
  if (Logfile == nullptr) return INVALID_PROCESSTRACE_HANDLE;
  try {
    return open_trace(Logfile);
  } catch (...) {
    etwrt::fault_status("OpenTraceA");
    return INVALID_PROCESSTRACE_HANDLE;
  }
}

ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime) {
  return etwrt::guarded("ProcessTrace", [&]() -> ULONG {
    if (const ULONG check = check_process_trace(HandleArray, HandleCount, StartTime, EndTime);
        check != ERROR_SUCCESS) {
      return check;
    }
    std::vector<Consumer*> consumers;
    if (const ULONG claim = claim_consumers(HandleArray, HandleCount, consumers);
        claim != ERROR_SUCCESS) {
      return claim;
    }
    struct Active {
      Consumer* consumer;
      Hub* hub;
      std::unique_ptr<Subscriber> sub;
      std::unique_ptr<Delivery> delivery;
      bool done = false;
    };
    std::vector<Active> active;
    for (Consumer* c : consumers) {
      active.push_back(
          {c, &hub_of(c->pool), std::make_unique<Subscriber>(), std::make_unique<Delivery>(*c)});
      active.back().delivery->set_window(StartTime, EndTime);
    }
    // Joined before the header event is delivered (so a consumer that saw it is attached);
    // records queue meanwhile and reach the callback after it, on this thread.
    for (Active& a : active) a.hub->join(a.sub.get());
    for (Active& a : active) a.delivery->header_event();
    ULONG status = ERROR_SUCCESS;
    std::size_t remaining = active.size();
    std::deque<BatchPtr> batches;
    while (remaining > 0 && status == ERROR_SUCCESS) {
      for (Active& a : active) {
        if (a.done) continue;
        if (a.consumer->close_requested.load(std::memory_order_acquire)) {
          a.done = true;
          --remaining;
          continue;
        }
        batches.clear();
        const bool more = a.hub->take(a.sub.get(), batches);
#if defined(ETWRT_MUTANTS)
        // Mutant: each batch's records reach the consumer newest first.
        if (etwrt::mutant::active("records-out-of-order")) {
          for (BatchPtr& b : batches) {
            auto reversed = std::make_shared<Batch>(*b);
            std::reverse(reversed->entries.begin(), reversed->entries.end());
            b = reversed;
          }
        }
#endif
        Delivery& d = *a.delivery;
        std::size_t items = 0;
        dataplane::RecordView v;
        for (const BatchPtr& b : batches) {
          for (const std::uint64_t e : b->entries) {
            if (Batch::is_loss(e)) {
              const dataplane::LossReport& loss = b->loss(e);
              a.consumer->logfile->EventsLost +=
                  static_cast<ULONG>(loss.events_lost + loss.realtime_events_lost);
              d.losses(loss);
            } else if (b->view(e, v) && v.timestamp_ns >= a.sub->since_ns &&
                       d.in_window(v.timestamp_ns)) {
              d.record(v);
            } else {
              continue;
            }
            ++items;
          }
        }
        if (items > 0) {
          EVENT_TRACE_LOGFILEA* l = a.consumer->logfile;
          ++l->BuffersRead;
          l->Filled = static_cast<ULONG>(items);
          if (l->BufferCallback != nullptr && l->BufferCallback(l) == FALSE) {
            status = ERROR_CANCELLED;
            break;
          }
        }
        if (!more) {
          if (a.sub->error != ERROR_SUCCESS) status = a.sub->error;
          a.done = true;
          --remaining;
        }
      }
    }
    for (Active& a : active) a.hub->leave(a.sub.get());
    active.clear();
    std::lock_guard lock(g_mu);
    for (Consumer* c : consumers) {
      c->processing = false;
      if (c->closed) {
        g_consumers.erase(c);
        delete c;
      }
    }
    return status;
  });
}

ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle) {
  return etwrt::guarded("CloseTrace", [&]() -> ULONG {
    std::lock_guard lock(g_mu);
    Consumer* c = find_locked(TraceHandle);
    if (c == nullptr) return ERROR_INVALID_HANDLE;
    if (c->processing) {
      // ProcessTrace returns after the current buffer and frees the handle.
      c->closed = true;
      c->close_requested.store(true, std::memory_order_release);
      return ERROR_CTX_CLOSE_PENDING;
    }
    g_consumers.erase(c);
    delete c;
    return ERROR_SUCCESS;
  });
}

}  // extern "C"
