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

// Delivers one consumer's events: owns the conversion state of one ProcessTrace call.
class Delivery {
 public:
  // `logfile` is the caller's of OpenTraceA; `header` what OpenTraceA gave it (ReservedFlags:
  // the session's clock). Both outlive the ProcessTrace call.
  Delivery(EVENT_TRACE_LOGFILEA& logfile, const TRACE_LOGFILE_HEADER& header, SessionPool& pool);

  // ProcessTrace's StartTime and EndTime (FILETIMEs; NULL: no bound).
  void set_window(const FILETIME* start, const FILETIME* end);

  // The synthetic first event: EventTraceGuid, Opcode 0, a TRACE_LOGFILE_HEADER as UserData.
  void header_event();

  // Hands `batches` to the callbacks: each loss as RT_LostEvent events (and counted in the
  // logfile's EventsLost), each record stamped at or after `since_ns` and inside the window.
  // Returns how many events reached the callbacks.
  std::size_t deliver(const std::deque<BatchPtr>& batches, std::uint64_t since_ns);

  // One record or loss report as deliver() treats it, for a ProcessTrace that reads the pool
  // itself (Hub::direct_poll): a record stamped before `since_ns` or outside the window is
  // skipped (false), a loss is counted in EventsLost and announced as RT_LostEvent events.
  bool deliver_record(const dataplane::RecordView& v, std::uint64_t since_ns) {
    if (v.timestamp_ns < since_ns || (windowed_ && !in_window(v.timestamp_ns))) return false;
    record(v);
    return true;
  }
  void deliver_loss(const dataplane::LossReport& loss);

 private:
  bool event_record_mode() const { return event_record_mode_; }
  std::int64_t file_time(std::uint64_t monotonic_ns) const;
  std::int64_t timestamp(std::uint64_t monotonic_ns) const;
  std::int64_t event_time(const dataplane::RecordView& v) const;
  bool in_window(std::uint64_t monotonic_ns) const;
  std::int64_t now() const;
  void losses(const dataplane::LossReport& loss);
  void record(const dataplane::RecordView& v);
  void emit_synthetic(const GUID& provider, UCHAR opcode, std::int64_t time, const void* data,
                      std::size_t size, bool classic_header);
  void classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time, ULONG pid,
               ULONG tid, const void* data, std::size_t size);

  EVENT_TRACE_LOGFILEA& logfile_;
  const TRACE_LOGFILE_HEADER& header_;
  SessionPool& pool_;
  std::int64_t offset_ns_;
  // Read once from the logfile: per event, the usual case (EVENT_RECORDs stamped as FILETIMEs)
  // costs two predicted branches.
  bool event_record_mode_;
  bool file_time_stamps_;  // TimeStamp is a FILETIME (no RAW_TIMESTAMP, or the system clock)
  std::int64_t window_start_ = INT64_MIN;
  std::int64_t window_end_ = INT64_MAX;
  bool windowed_ = false;
};

}  // namespace etwrt
