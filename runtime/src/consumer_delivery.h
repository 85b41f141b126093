// etwrt: what one ProcessTrace call hands its consumer's callbacks: the hub's records as
// EVENT_RECORDs (or classic EVENT_TRACEs without PROCESS_TRACE_MODE_EVENT_RECORD), after the
// synthetic header event, with RT_LostEvent pseudo-events where the pool reported a loss, and
// the timestamps in the clock the consumer asked for.
#pragma once

#include "client.h"
#include "consumer_batch.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <cstddef>
#include <cstdint>
#include <deque>

namespace etwrt {

// 100 ns intervals from 1601-01-01 (FILETIME) to 1970-01-01.
inline constexpr std::int64_t kUnixEpochAsFileTime = 116444736000000000LL;

// Delivers one consumer's events: owns the conversion state of one ProcessTrace call. It is
// also the sink a ProcessTrace that reads the pool itself polls into (Hub::direct_poll): the
// reader decodes each record once, straight from the pool's bytes into the EVENT_RECORD the
// callback gets, and this converts its TimeStamp and hands it on.
class Delivery final : public dataplane::EventSink {
 public:
  // `logfile` is etwrt's copy of the record OpenTrace was given (BufferCallback gets it);
  // `header` the session's (ReservedFlags: its clock). Both outlive the ProcessTrace call.
  // `logger_id`: the session's, every event's BufferContext.LoggerId.
  Delivery(EVENT_TRACE_LOGFILEA& logfile, const TRACE_LOGFILE_HEADER& header, SessionPool& pool,
           USHORT logger_id);

  // ProcessTrace's StartTime and EndTime (FILETIMEs; NULL: no bound).
  void set_window(const FILETIME* start, const FILETIME* end);
  // Records stamped before `since_ns` (the pool's clock) are not this consumer's: skipped.
  void set_since(std::uint64_t since_ns) { since_ns_ = since_ns; }

  // The synthetic first event: EventTraceGuid, Opcode 0, a TRACE_LOGFILE_HEADER as UserData.
  void header_event();

  // Hands `batches` to the callbacks: each loss as RT_LostEvent events (and counted in the
  // logfile's EventsLost), each record stamped at or after `since_ns` and inside the window.
  // Returns how many items (records and loss reports) reached the callbacks.
  std::size_t deliver(const std::deque<BatchPtr>& batches);

  // One record: skipped when stamped before `since_ns` or outside the window, else handed to
  // the callback, its TimeStamp in the consumer's clock.
  void event(dataplane::EventRecordOut& e) override;
  // A loss report: counted in EventsLost and announced as RT_LostEvent events.
  void loss(const dataplane::LossReport& loss) override;
  // Items (records and loss reports) that reached the callbacks since the last call.
  std::size_t take_delivered() {
    const std::size_t n = delivered_;
    delivered_ = 0;
    return n;
  }

 private:
  // The clock an event's TimeStamp is given in, chosen once from the logfile's mode and the
  // session's clock (WNODE_HEADER page, rule CON-CLOCK).
  enum class Stamp { file_time, qpc, cycles };

  // Unsigned: the sum is the realtime clock's ns since 1970, never negative.
  std::int64_t file_time(std::uint64_t monotonic_ns) const {
    return kUnixEpochAsFileTime +
           static_cast<std::int64_t>((monotonic_ns + static_cast<std::uint64_t>(offset_ns_)) / 100);
  }
  std::int64_t timestamp(std::uint64_t monotonic_ns) const {
    if (stamp_ == Stamp::file_time) return file_time(monotonic_ns);               // The usual case.
    if (stamp_ == Stamp::cycles) return static_cast<std::int64_t>(monotonic_ns);  // 1000 MHz.
    return static_cast<std::int64_t>(monotonic_ns / 100);                         // QPC, 10 MHz.
  }
  std::int64_t override_time(std::uint64_t raw) const;
  bool in_window(std::uint64_t monotonic_ns) const;
  std::int64_t now() const;
  void losses(const dataplane::LossReport& loss);
  void emit_synthetic(const GUID& provider, UCHAR opcode, std::int64_t time, const void* data,
                      std::size_t size, bool classic_header);
  void classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time, ULONG pid,
               ULONG tid, USHORT processor, const void* data, std::size_t size);

  EVENT_TRACE_LOGFILEA& logfile_;
  const TRACE_LOGFILE_HEADER& header_;
  SessionPool& pool_;
  USHORT logger_id_;
  std::int64_t offset_ns_;
  // Read once from the logfile: per event, the usual case (EVENT_RECORDs stamped as FILETIMEs)
  // costs two predicted branches.
  bool event_record_mode_;
  Stamp stamp_;
  std::uint64_t since_ns_ = 0;
  std::size_t delivered_ = 0;
  std::int64_t window_start_ = INT64_MIN;
  std::int64_t window_end_ = INT64_MAX;
  bool windowed_ = false;
};

}  // namespace etwrt
