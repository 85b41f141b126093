/*
 * etwrt data plane: a session's buffer pool in shared memory, the writer fast path
 * (EventWrite's back end), the realtime reader, and exact loss accounting.
 *
 * One pool = one memfd mapping, position independent (offsets only), so the broker can pass
 * its fd to providers and consumers with SCM_RIGHTS. See runtime/dataplane/README.md for the
 * buffer layout, the commit protocol, flush and the loss accounting identity.
 *
 * Threading: a Pool may be shared by any number of threads and processes. A Writer belongs to
 * one thread at a time. A Reader belongs to one thread; each session of a pool has at most one
 * Reader attached.
 */
#ifndef ETWRT_DATAPLANE_H
#define ETWRT_DATAPLANE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "evntcons.h"
#include "evntprov.h"

namespace etwrt::dataplane {

// Thrown for invalid configuration or a mapping that is not a valid pool; the message says
// exactly which value was wrong. Nothing is mapped or created when it is thrown.
// Sessions one pool can hold (README "Buffers shared among sessions").
inline constexpr uint32_t kMaxPoolSessions = 8;

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The session parameters that shape the pool, with ETW's meaning (EVENT_TRACE_PROPERTIES).
struct PoolConfig {
  uint32_t buffer_size_kb = 64;   // BufferSize, in KB: 1..16384
  uint32_t minimum_buffers = 4;   // MinimumBuffers: allocated (counted) from the start
  uint32_t maximum_buffers = 32;  // MaximumBuffers: >= minimum_buffers, <= 65536
  // Room for sessions to come (README "Buffers shared among sessions"): the buffers the pool
  // may ever hold, >= maximum_buffers, <= 65536 (0: maximum_buffers). Only its descriptors
  // and the pages written are memory; add_session() raises how far the pool may grow.
  uint32_t reserve_buffers = 0;
  uint32_t flush_timer_s = 1;  // FlushTimer, seconds; 0 = partial buffers only on explicit flush
  // Realtime session: when no buffer is free and a consumer is attached, the oldest delivered
  // buffer the consumer has not taken yet is reclaimed and counted (RealTimeBuffersLost).
  // Otherwise (or with no consumer attached) the new event is lost and counted (EventsLost).
  bool realtime = true;
  // Timestamps from the TSC (calibrated against CLOCK_MONOTONIC at creation) when it is
  // invariant; otherwise, or when false, clock_gettime(CLOCK_MONOTONIC). Both give ns.
  bool prefer_tsc = true;
};

// ControlTrace(QUERY)'s counters plus the ones needed to prove the accounting identity.
// Snapshot of atomics read one by one: exact once writers and reader are quiescent.
struct Counters {
  uint64_t events_lost = 0;            // EventsLost: no buffer for the event, or too large
  uint64_t realtime_buffers_lost = 0;  // RealTimeBuffersLost: buffers reclaimed unread
  uint64_t realtime_events_lost = 0;   // events those reclaimed buffers held, unread
  uint64_t buffers_written = 0;        // BuffersWritten: buffers handed to delivery
  uint32_t number_of_buffers = 0;      // NumberOfBuffers: allocated so far (min..max)
  uint32_t free_buffers = 0;           // FreeBuffers: allocated and currently unused
  uint64_t events_committed = 0;       // records committed (complete), in any buffer state
  uint64_t events_delivered = 0;       // records handed to a reader's callback
  uint64_t writer_recoveries = 0;      // buffers recovered from writers that died
};

// One decoded record, pointing into the pool's memory (valid only during the callback).
struct RecordView {
  GUID provider_id{};
  EVENT_DESCRIPTOR descriptor{};
  uint64_t timestamp_ns = 0;  // pool clock domain (CLOCK_MONOTONIC ns)
  uint32_t process_id = 0;
  uint32_t thread_id = 0;
  uint16_t flags = 0;      // EVENT_HEADER_FLAG_* (EXTENDED_INFO set when extended items exist)
  uint16_t processor = 0;  // the CPU the writer ran on
  GUID activity_id{};
  bool has_related_activity_id = false;
  GUID related_activity_id{};
  std::span<const std::byte> provider_traits;  // empty when the provider set none
  std::span<const std::byte> event_schema;     // EVENT_SCHEMA_TL item; empty when none
  bool has_timestamp_override = false;         // EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE
  uint64_t timestamp_override = 0;             // in the pool clock's unit, as given
  std::span<const std::byte> user_data;
  // The whole record as stored (header, extended items, user data): a consumer that keeps
  // records past the callback copies these bytes once and decodes the copy when it needs it.
  std::span<const std::byte> encoded;
};

// A record as the reader's parser validated it, its fixed fields left where the writer stored
// them (the pool's memory: valid during the call only), for a consumer that lays every record
// out again elsewhere (the broker's trace-file logger), to which a RecordView would be one more
// copy of each field. The lengths are the parser's, read once from the record: use these, never
// the header's. Each part starts 8-aligned in the record and the record holds it rounded up to
// a multiple of 8 bytes, so a copy may read whole 8-byte words.
struct StoredRecord {
  const std::byte* header = nullptr;  // the record's first 80 bytes: fields at kStored* below
  uint64_t timestamp_ns = 0;          // the record's own (pool clock), which orders delivery
  uint16_t flags = 0;                 // EVENT_HEADER_FLAG_* as the writer stored them
  const std::byte* related_activity_id = nullptr;  // a GUID's 16 bytes, null when none
  std::span<const std::byte> provider_traits;
  std::span<const std::byte> event_schema;
  bool has_timestamp_override = false;
  uint64_t timestamp_override = 0;
  std::span<const std::byte> user_data;
};
// Where StoredRecord::header holds each fixed field (README "Record layout"): the process and
// thread ids are two 32-bit values, the provider's GUID and the EVENT_DESCRIPTOR follow each
// other, then the ActivityId; the writer's processor is at the end.
inline constexpr size_t kStoredProcessId = 16;
inline constexpr size_t kStoredThreadId = 20;
inline constexpr size_t kStoredProviderId = 24;
inline constexpr size_t kStoredDescriptor = 40;
inline constexpr size_t kStoredActivityId = 56;
inline constexpr size_t kStoredProcessor = 76;  // a uint16_t: the CPU the writer ran on
inline constexpr size_t kStoredHeaderBytes = 80;

// What the writer passes for one event. Pointers must stay valid for the call only.
struct EventInput {
  const GUID* provider_id = nullptr;             // required
  const EVENT_DESCRIPTOR* descriptor = nullptr;  // required
  const GUID* activity_id = nullptr;             // null = GUID_NULL
  const GUID* related_activity_id = nullptr;     // null = none (no extended item)
  std::span<const std::byte> provider_traits;    // empty = none (no extended item)
  std::span<const std::byte> event_schema;       // TraceLogging event metadata; empty = none
  // The provider's timestamp (TIMESTAMP_OVERRIDE descriptor): carried beside the record's own
  // timestamp, which still orders delivery; null = none.
  const uint64_t* timestamp_override = nullptr;
  std::span<const EVENT_DATA_DESCRIPTOR> user_data;
  uint32_t thread_id = 0;  // 0 = the calling thread's id (gettid, cached per Writer)
  // EVENT_HEADER_FLAG_* the record carries besides those the encoder derives (TraceEvent's
  // CLASSIC_HEADER, TraceMessage's TRACE_MESSAGE).
  uint16_t extra_flags = 0;
};

// Encoding and decoding of one record, exposed for the layout round-trip test and for tools.
// encoded_size: bytes the record takes in a buffer (8-aligned). encode writes exactly that
// many bytes. decode validates every length against `bytes` and returns false on any
// inconsistency (the reader then treats the rest of the buffer as corrupt, never guesses).
size_t encoded_size(const EventInput& in);
void encode_record(const EventInput& in, uint64_t timestamp_ns, uint32_t process_id,
                   uint32_t thread_id, std::byte* out, uint16_t processor = 0);
bool decode_record(std::span<const std::byte> bytes, RecordView& out, size_t& record_size);

// The same record decoded straight into what a consumer's EventRecordCallback gets
// (evntcons.h), by the same validating parser as decode_record (each accepts exactly what the
// other accepts): the EVENT_HEADER from the record's header (TimeStamp: the record's own
// timestamp_ns, for the caller to convert; Flags: the stored ones plus 64_BIT_HEADER, with
// EXTENDED_INFO exactly when ExtendedData holds items), its
// visible extended items in `items` (ExtendedData points there, null when none), UserData into
// `bytes`. UserContext is left null for the caller. Valid while `bytes` and `out` are.
struct EventRecordOut {
  EVENT_RECORD record;
  EVENT_HEADER_EXTENDED_DATA_ITEM items[3];  // related activity, provider traits, TL schema
  bool has_timestamp_override;
  uint64_t timestamp_override;  // in the pool clock's unit, as given; set only with the above
  uint32_t user_data_size;      // UserDataLength is a USHORT: the whole length
};
bool decode_event_record(std::span<const std::byte> bytes, EventRecordOut& out,
                         size_t& record_size);
// The same record as Reader::poll(RecordSink&) hands it (StoredRecord), by the same parser.
bool decode_stored_record(std::span<const std::byte> bytes, StoredRecord& out, size_t& record_size);

// What the reader merges records by, read from the header alone: the record's size and
// timestamp. False when the size cannot be a record's within `bytes` (too small, not
// 8-aligned, past the end). A record it accepts may still fail the decoders' checks.
bool frame_record(std::span<const std::byte> bytes, uint32_t& size, uint64_t& timestamp_ns);

// The pool. Movable, not copyable; unmaps (and closes its fd) on destruction. Destroying the
// last mapping frees the memory; the data outlives any single process that maps it.
class Pool {
 public:
  // Creates a new pool in a fresh memfd named `name` (for /proc/<pid>/fd readability).
  static Pool create(const PoolConfig& config, const std::string& name);
  // Maps an existing pool from an fd received from its creator; dups the fd (the caller
  // keeps its own). Throws Error when the mapping is not a pool of this layout version.
  static Pool attach(int fd);
  // A second handle on this mapping, for another session of the pool in the same process: one
  // mapping per pool, not per session (eight sessions' readers through eight mappings of one
  // pool counted it eight times in the process's RSS). It unmaps and closes nothing, so this
  // pool must outlive it (etwrt's client keeps every pool it maps until the process exits).
  Pool alias() const;

  Pool(Pool&&) noexcept;
  Pool& operator=(Pool&&) noexcept;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  int fd() const { return fd_; }
  PoolConfig config() const;
  uint32_t buffer_bytes() const;

  // Sessions sharing the pool (README "Buffers shared among sessions"): each writes its
  // records once, with a bit per session that accepted it, and each session has its own
  // reader, counters and losses. A pool starts with session 0; add_session() gives the next
  // index never given in this pool (up to 8; Error after), remove_session() takes one out
  // (after its reader detached): the buffers it alone still needed are freed.
  // The pool may then grow by `maximum_buffers` more (Error when its reserve has no room),
  // and `minimum_buffers` are counted at once, as at creation.
  uint32_t add_session(uint32_t minimum_buffers = 0, uint32_t maximum_buffers = 0);
  void remove_session(uint32_t session);
  uint32_t sessions() const;  // the mask of the sessions that exist now

  // One session's ControlTrace(QUERY) counters. NumberOfBuffers and FreeBuffers: the pool's,
  // or with several sessions the session's share of them, in proportion to its MaximumBuffers;
  // never more than its MaximumBuffers (the pool keeps what it grew for sessions that left).
  Counters query(uint32_t session = 0) const;
  uint64_t now_ns() const;  // the pool's clock, as writers stamp records
  // What stamps this pool's records (source and calibration), fixed at creation: pools with
  // equal keys have one clock, so one reading can stamp an event in each of them. A caller
  // keeps the key and compares it without a call.
  struct ClockKey {
    uint32_t kind = 0;
    uint64_t tsc_base = 0;
    uint64_t mono_base_ns = 0;
    uint64_t ns_per_tick_q32 = 0;
    bool operator==(const ClockKey&) const = default;
  };
  ClockKey clock_key() const;

  // ControlTrace(FLUSH): asks the attached reader to deliver partially filled buffers at its
  // next poll. Writers are not stopped.
  void request_flush(uint32_t session = 0);
  // Wakes a reader blocked in Reader::wait (e.g. the session stopped, or its consumers
  // changed). One system call; writers do this themselves when they commit.
  void wake_reader(uint32_t session = 0);
  uint32_t reader_pid(uint32_t session = 0) const;  // the process holding its Reader, 0 = none

  // Recovery, for the broker when it learns that a peer died (or a periodic sweep): hands to
  // delivery every buffer still owned by a writer process that no longer exists (its
  // committed records are delivered, a torn record beyond the commit point is not), and
  // detaches a reader whose process no longer exists (the buffers it had claimed go back to
  // delivery from the first record it had not consumed). Returns the buffers recovered.
  // Liveness is checked with kill(pid, 0); `is_alive` replaces that check in tests.
  uint32_t recover_dead_peers(const std::function<bool(uint32_t pid)>& is_alive = {});

  struct Shared;  // the layout in shared memory (dataplane_layout.h)
  Shared* shared() const { return shared_; }

 private:
  Pool(int fd, Shared* shared, size_t length, bool owns = true);
  int fd_ = -1;
  Shared* shared_ = nullptr;
  size_t length_ = 0;
  bool owns_ = true;  // false: an alias(), which unmaps and closes nothing
};

enum class WriteResult {
  written,    // committed: will be delivered or counted in a lost buffer
  lost,       // no buffer available: counted in EventsLost (EventWrite: ERROR_NOT_ENOUGH_MEMORY)
  too_large,  // record larger than a buffer: counted in EventsLost (ERROR_MORE_DATA)
};

// A writer's handle on one pool: owns at most one buffer at a time, exclusively, so the
// common path is a copy into that buffer and one release store, with no system call and no
// shared lock. Not thread-safe: use one per thread (the wiring keeps one per thread and
// session), and never one inherited through fork (the child makes its own). Destruction (or
// release()) hands the current buffer to delivery.
struct BufferDesc;  // a buffer's descriptor in the pool (dataplane_layout.h)

class Writer {
 public:
  explicit Writer(Pool& pool);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  WriteResult write(const EventInput& event);
  // The same with a timestamp the caller read from this pool's clock, or from a pool with
  // the same clock (equal Pool::clock_key), e.g. once for all the sessions of one event.
  WriteResult write(const EventInput& event, uint64_t timestamp_ns);
  // The same for the pool's sessions in the mask `sessions` (bit i: session i accepted it),
  // once for all of them. timestamp_ns 0: read the pool's clock.
  WriteResult write(const EventInput& event, uint64_t timestamp_ns, uint32_t sessions);
  // The record this writer committed last, as the pool holds it: valid until this writer's
  // next write or release (its buffer stays this writer's until then).
  std::span<const std::byte> last_record() const {
    return {data_ + offset_ - last_size_, last_size_};
  }
  // Commits a copy of a record another writer of this thread encoded (its last_record()), in
  // a pool whose clock is the same as that writer's (equal clock_key): one event written to
  // several sessions is encoded once, then copied.
  // `sessions` as in write(): this pool's.
  WriteResult write_copy(std::span<const std::byte> record, uint32_t sessions = 1);
  // Hands the current buffer (if any) to delivery now, e.g. when the thread exits.
  void release();

 private:
  bool acquire_buffer();
  // Room for `size` bytes at the end of the owned buffer (taking a new one if needed), or
  // nullptr (counted in EventsLost).
  std::byte* reserve(size_t size);
  void commit(uint32_t size, uint32_t sessions);
  void note_sessions(BufferDesc& d, uint32_t sessions);
  // EventsLost, for each of the sessions.
  void count_lost(uint32_t sessions);
  Pool& pool_;
  uint32_t pid_;
  uint32_t tid_;
  uint32_t buffer_ = UINT32_MAX;  // index of the owned buffer, or none
  std::byte* data_ = nullptr;     // its data
  uint32_t offset_ = 0;           // committed bytes (the writer's own copy)
  uint32_t events_ = 0;           // committed records
  uint32_t last_size_ = 0;        // bytes of the last committed record
  uint32_t sessions_ = 0;         // the sessions of the records in the owned buffer
  bool mixed_ = false;            // they are not the same for every record
  static constexpr uint64_t kNoEpoch = UINT64_MAX;
  uint64_t failed_epoch_ = kNoEpoch;  // pool supply epoch of the last fruitless search
};

struct ReaderOptions {
  // Deliver the committed prefix of buffers still being written at every poll (lowest latency,
  // best ordering). When false, partial buffers are delivered only at FlushTimer expiry, on
  // request_flush(), or with poll(true).
  bool eager_partial = false;
  // A poll delivers records stamped before it started (see reader.cc for why), minus this
  // margin: a record whose writer took its timestamp but had not committed it when the poll
  // began then still sorts before what is delivered. 0 = no margin (such a late record is
  // delivered later and counted in order_inversions()). Ignored by poll(flush = true).
  uint64_t hold_back_ns = 0;
  // A reader that keeps up with a writer streaming into a buffer still being written reads
  // right behind its commit, and every line the writer goes on to write is then taken back
  // from the reader's core: the writer's EventWrite cost 2-5x (README "Reading behind a
  // streaming writer"). So after a poll that delivered at least `streaming_records` records,
  // and for `streaming_window_ns` after it, polls hold back this much more: the reader stays
  // that far behind the writers, which at a streaming rate is far more than its cache's reach.
  // A moderate stream (thin polls) is read as soon as committed. 0 = off. Ignored by flush.
  uint64_t streaming_hold_back_ns = 0;
  uint32_t streaming_records = 16;
  uint64_t streaming_window_ns = 100'000;
  // Delivered buffers taken per poll, oldest first; the others stay reclaimable by writers
  // when the pool runs out (RealTimeBuffersLost). 0 = all. Ignored by poll(flush = true).
  uint32_t max_claim_per_poll = 4;
};

// The consumer side: takes delivered buffers (and, on flush, committed prefixes of buffers
// still being written), yields their records merged in timestamp order, and frees buffers
// once read. Attaching fails (Error) when another live reader is attached.
// Losses that happened since the previous report (what RT_LostEvent announces).
struct LossReport {
  uint64_t realtime_buffers_lost = 0;  // RTLostBuffer
  uint64_t realtime_events_lost = 0;   // records those buffers held
  uint64_t events_lost = 0;            // RTLostEvent: events dropped at write
};

// Where a poll hands its records, decoded straight from the pool's bytes into what a
// consumer's EventRecordCallback gets (decode_event_record's parser, inlined in the reader's
// merge: one pass over each record, one virtual call), and its loss reports. No std::function,
// no RecordView: the consumer's hot path.
class EventSink {
 public:
  // One record, in timestamp order. `event` is the reader's, valid during the call only; the
  // sink may change it (convert TimeStamp, set UserContext) before handing it on.
  virtual void event(EventRecordOut& event) = 0;
  // The pool's losses since the last report, before the records they precede.
  virtual void loss(const LossReport& loss) = 0;

 protected:
  ~EventSink() = default;
};

// Where a poll hands each record as the parser validated it (StoredRecord), and its loss
// reports: the broker's trace-file logger.
class RecordSink {
 public:
  virtual void record(const StoredRecord& record) = 0;
  virtual void loss(const LossReport& loss) = 0;

 protected:
  ~RecordSink() = default;
};

class Reader {
 public:
  using Callback = std::function<void(const RecordView&)>;
  using LossCallback = std::function<void(const LossReport&)>;
  // The reader of one session of the pool: it delivers that session's records only.
  Reader(Pool& pool, ReaderOptions options = {}, uint32_t session = 0);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader();  // detaches; unread records stay in the pool for the next reader

  // Delivers the records committed before the call; returns how many. Callbacks must not
  // throw (the wiring calls user callbacks inside its own, which catches). `flush` forces
  // partial buffers in and ignores hold_back_ns (use it for the final drain, in a loop until
  // it returns 0).
  // When losses were counted since the previous poll, `on_loss` is called once with them
  // before this poll's records, so the consumer learns of a gap ahead of the data after it.
  // Reports add up exactly to the pool's counters (since its creation: losses from before
  // this reader attached come with its first poll).
  size_t poll(const Callback& callback, bool flush = false, const LossCallback& on_loss = {});
  // The same into a sink that gets each record as an EVENT_RECORD.
  size_t poll(EventSink& sink, bool flush = false);
  // The same into a sink that gets each record as the parser validated it, not copied out.
  size_t poll(RecordSink& sink, bool flush = false);

  // Idle wait without a poll interval: prepare_wait() tells writers the reader is about to
  // sleep; the caller then polls once more (a commit that raced with the announcement is
  // seen there) and, if it got nothing, calls wait(token, ...), which returns when a writer
  // committed since prepare_wait() (the writer that sees the flag makes the one wake-up
  // system call), on Pool::wake_reader(), or after timeout_ns. A commit whose flag check ran
  // before the announcement became visible (no fence on the write path) is only seen at the
  // timeout: keep it short enough to bound that rare latency. Returns true when woken.
  uint32_t prepare_wait();
  bool wait(uint32_t token, uint64_t timeout_ns);
  // The poll after prepare_wait() found records: do not sleep. True when a writer already
  // paid a wake-up for this announcement (the wake sequence moved since `token`).
  bool cancel_wait(uint32_t token);
  // Sleeps up to timeout_ns without telling writers (no writer pays a wake-up for it);
  // Pool::wake_reader() still ends it at once.
  void nap(uint64_t timeout_ns);

  uint64_t order_inversions() const { return inversions_; }  // records older than one before
  uint64_t corrupt_buffers() const { return corrupt_; }

 private:
  struct Open {
    uint32_t index;
    uint32_t cursor;  // bytes consumed
    uint32_t events;  // records consumed
  };
  bool flush_due(bool forced);
  uint64_t claim(bool include_partial, bool unlimited);
  // What the pool lost since the last report (false: nothing).
  bool take_losses(LossReport& since_last);
  // The work of a poll; `Consumer` (reader.cc) decodes each record (false: corrupt) and
  // hands it and the loss reports on: to a std::function as a RecordView, or to an EventSink.
  template <typename Consumer>
  size_t poll_into(Consumer& consumer, bool flush);
  // Merges what the open buffers committed, stamped up to `watermark`, oldest first; losses
  // are announced after the commits are read and before any record.
  template <typename Consumer>
  size_t deliver(Consumer& consumer, uint64_t watermark);
  // A buffer's next record, framed (its size and timestamp), for the merge.
  struct Cursor {
    uint32_t open;   // index into open_
    uint32_t limit;  // committed bytes seen at the start of this poll
    uint32_t limit_events;
    uint32_t size;
    uint64_t timestamp_ns;
  };
  bool load(Cursor& c);
  void skip_corrupt(Cursor& c);
  // Publishes progress and frees the buffers read to the end of what their writer handed over.
  void free_finished();
  // Lets go of an open buffer: `finished` (read to the end of what its writer handed over)
  // also takes it off the pending sessions, and the last session frees it.
  void let_go(const Open& o, bool finished);
  Pool& pool_;
  ReaderOptions options_;
  uint32_t session_;
  uint32_t bit_;  // 1 << session_
  std::vector<Open> open_;
  std::vector<std::pair<uint64_t, uint32_t>> full_;  // scratch: (handoff_seq, index)
  std::vector<Cursor> heap_;                         // scratch: the merge's cursors
  uint64_t last_flush_request_ = 0;
  uint64_t last_flush_ns_ = 0;
  uint64_t last_timestamp_ = 0;
  uint64_t inversions_ = 0;
  uint64_t streaming_until_ns_ = 0;  // streaming_hold_back_ns applies to polls until then
  LossReport reported_;              // pool counters as of the last report
  // What reclaims lost for this session, summed over the buffers when the pool's count of
  // reclaims moves (UINT64_MAX: never summed).
  uint64_t seen_reclaims_ = UINT64_MAX;
  struct {
    uint64_t buffers = 0;
    uint64_t events = 0;
  } reclaimed_;
  uint64_t corrupt_ = 0;
};

// Several consuming processes on one pool (README "Several consuming processes"). The pool
// has one Reader; the process holding it feeds every other consuming process through a
// relay slot in the pool: a byte ring it fills with what its Reader delivers (records and
// loss reports), so a second consumer costs the first nothing when absent and writers
// nothing ever. A full ring drops records for that consumer only, counted and announced.

// The feeder's side, beside the Reader (same thread).
class RelayFeeder {
 public:
  // Feeds the slots claimed for `session`, beside that session's Reader.
  explicit RelayFeeder(Pool& pool, uint32_t session = 0) : pool_(pool), session_(session) {}
  RelayFeeder(const RelayFeeder&) = delete;
  RelayFeeder& operator=(const RelayFeeder&) = delete;

  // Activates slots that consumers claimed (their feed starts with records stamped from
  // `since_ns` on: call it before the poll whose records it then pushes) and forgets slots
  // their consumer released or whose process died. Returns the slots being fed.
  size_t refresh(uint64_t since_ns);
  size_t active() const;
  void push(const RecordView& record);
  void push_loss(const LossReport& loss);  // the pool's losses, as the Reader reported them
  // Wakes consumers asleep on their slot (once per batch, not per record).
  void wake();
  void end();  // the session stopped and everything was pushed

 private:
  void drop(uint32_t slot);
  bool write_entry(uint32_t slot, uint32_t kind, size_t payload,
                   const std::function<void(std::byte*)>& fill);
  bool write_mark(uint32_t slot);
  Pool& pool_;
  uint32_t session_;
  uint32_t active_mask_ = 0;
  uint32_t mark_pending_ = 0;  // slots whose next entry must be a loss mark
  uint32_t in_gap_ = 0;        // slots dropping records since their last mark
  uint64_t seen_changes_ = UINT64_MAX;
  uint64_t last_liveness_ns_ = 0;
};

// A consuming process's side: claims a free slot (Error when there is none), asks the
// holder of the Reader to feed it, and drains it.
class RelayConsumer {
 public:
  // A slot fed with `session`'s records.
  explicit RelayConsumer(Pool& pool, uint32_t session = 0);
  RelayConsumer(const RelayConsumer&) = delete;
  RelayConsumer& operator=(const RelayConsumer&) = delete;
  ~RelayConsumer();  // releases the slot

  // True once a feeder activated the slot; `since_ns` = from when the feed is complete.
  bool active(uint64_t& since_ns) const;
  // Delivers what the ring holds, loss reports (this consumer's: the pool's since activation
  // and the ring's own drops) ahead of the records after each gap. Returns records delivered.
  size_t drain(const Reader::Callback& callback, const Reader::LossCallback& on_loss);
  // The feeder ended the feed (session stopped); after the last drain, also reports any loss
  // counted after the last mark.
  bool ended(const Reader::LossCallback& on_loss);
  uint32_t prepare_wait();
  bool wait(uint32_t token, uint64_t timeout_ns);
  bool cancel_wait(uint32_t token);  // like Reader::cancel_wait
  void nap(uint64_t timeout_ns);     // like Reader::nap: the feeder does not wake it, end() does
  uint64_t delivered() const { return delivered_; }

 private:
  Pool& pool_;
  uint32_t session_;
  uint32_t slot_ = 0;
  LossReport reported_;
  uint64_t delivered_ = 0;
};

}  // namespace etwrt::dataplane

#endif  // ETWRT_DATAPLANE_H
