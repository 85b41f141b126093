// etwrt: the conversion of a hub's records into a consumer's callbacks (consumer_delivery.h).
#include "consumer_delivery.h"

#include "trace_properties.h"

#include <time.h>

#include <cstdint>

namespace etwrt {
namespace {

std::int64_t realtime_minus_monotonic_ns() {
  timespec real{};
  timespec mono{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  return (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
}

std::int64_t file_time_value(const FILETIME& t) {
  return static_cast<std::int64_t>((std::uint64_t{t.dwHighDateTime} << 32) | t.dwLowDateTime);
}

}  // namespace

Delivery::Delivery(EVENT_TRACE_LOGFILEA& logfile, const TRACE_LOGFILE_HEADER& header,
                   SessionPool& pool, USHORT logger_id)
    : logfile_(logfile),
      header_(header),
      pool_(pool),
      logger_id_(logger_id),
      offset_ns_(realtime_minus_monotonic_ns()),
      event_record_mode_((logfile.ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) != 0),
      stamp_(Stamp::file_time) {
  // FILETIME by default; with PROCESS_TRACE_MODE_RAW_TIMESTAMP, the session's clock (the
  // header's ReservedFlags = ClientContext): QPC ticks at PerfFreq, system time as FILETIME,
  // cycles at CpuSpeedInMHz (WNODE_HEADER page, rule CON-CLOCK).
  if ((logfile.ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) != 0 &&
      header.ReservedFlags != kClockSystemTime) {
    stamp_ = header.ReservedFlags == kClockCpuCycles ? Stamp::cycles : Stamp::qpc;
  }
}

void Delivery::set_window(const FILETIME* start, const FILETIME* end) {
  if (start != nullptr) window_start_ = file_time_value(*start);
  if (end != nullptr) window_end_ = file_time_value(*end);
  windowed_ = start != nullptr || end != nullptr;
}

void Delivery::header_event() {
  TRACE_LOGFILE_HEADER header = header_;
  emit_synthetic(EventTraceGuid, EVENT_TRACE_TYPE_INFO, now(), &header, sizeof header, true);
}

std::size_t Delivery::deliver(const std::deque<BatchPtr>& batches) {
  dataplane::EventRecordOut out;
  std::size_t size = 0;
  for (const BatchPtr& b : batches) {
    for (const std::uint64_t e : b->entries) {
      if (Batch::is_loss(e)) {
        loss(b->loss(e));
      } else if (dataplane::decode_event_record(std::span<const std::byte>(b->arena).subspan(e),
                                                out, size)) {
        // A copy of what the reader decoded in the pool: false only if it was changed since.
        event(out);
      }
    }
  }
  return take_delivered();
}

void Delivery::loss(const dataplane::LossReport& loss) {
  logfile_.EventsLost += static_cast<ULONG>(loss.events_lost + loss.realtime_events_lost);
  losses(loss);
  ++delivered_;
}

void Delivery::event(dataplane::EventRecordOut& e) {
  EVENT_RECORD& r = e.record;
  const auto ns = static_cast<std::uint64_t>(r.EventHeader.TimeStamp.QuadPart);
  if (ns < since_ns_ || (windowed_ && !in_window(ns))) return;
  r.EventHeader.TimeStamp.QuadPart =
      e.has_timestamp_override ? override_time(e.timestamp_override) : timestamp(ns);
  ++delivered_;
  r.BufferContext.LoggerId = logger_id_;  // (the processor is the record's)
  if (!event_record_mode_) {
    const EVENT_HEADER& h = r.EventHeader;
    classic(h.ProviderId, h.EventDescriptor, h.TimeStamp.QuadPart, h.ProcessId, h.ThreadId,
            r.BufferContext.ProcessorIndex, r.UserData, e.user_data_size);
    return;
  }
  r.UserContext = logfile_.Context;
  if (logfile_.EventRecordCallback != nullptr) logfile_.EventRecordCallback(&r);
}

// A Type 3 descriptor's override (tracelogging.h) is a value of the session's clock: given as
// is with RAW_TIMESTAMP, else converted from that clock.
std::int64_t Delivery::override_time(std::uint64_t raw) const {
  if ((logfile_.ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) != 0 ||
      header_.ReservedFlags == kClockSystemTime) {
    return static_cast<std::int64_t>(raw);
  }
  return file_time(header_.ReservedFlags == kClockCpuCycles ? raw : raw * 100);
}

bool Delivery::in_window(std::uint64_t monotonic_ns) const {
  if (!windowed_) return true;  // The usual case: no conversion per event.
  const std::int64_t t = file_time(monotonic_ns);
  return t >= window_start_ && t <= window_end_;
}

// The synthetic events' time, in the clock the records use.
std::int64_t Delivery::now() const { return timestamp(pool_.pool.now_ns()); }

// RT_LostEvent (etwrt choice for the payload: the counts, as ULONG64s, since no document
// gives one): RTLostBuffer (33) = {buffers, events they held}, RTLostEvent (32) = {events}.
void Delivery::losses(const dataplane::LossReport& loss) {
  if (loss.realtime_buffers_lost > 0) {
    const std::uint64_t counts[2] = {loss.realtime_buffers_lost, loss.realtime_events_lost};
    emit_synthetic(RTLostEventGuid, 33, now(), counts, sizeof counts, false);
  }
  if (loss.events_lost > 0) {
    const std::uint64_t counts[1] = {loss.events_lost};
    emit_synthetic(RTLostEventGuid, 32, now(), counts, sizeof counts, false);
  }
}

void Delivery::emit_synthetic(const GUID& provider, UCHAR opcode, std::int64_t time,
                              const void* data, std::size_t size, bool classic_header) {
  EVENT_DESCRIPTOR d{};
  d.Opcode = opcode;
  if (!event_record_mode_) {
    classic(provider, d, time, 0, 0, 0, data, size);
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
  r.BufferContext.LoggerId = logger_id_;
  r.UserContext = logfile_.Context;
  if (logfile_.EventRecordCallback != nullptr) logfile_.EventRecordCallback(&r);
}

// The classic form (EventCallback without PROCESS_TRACE_MODE_EVENT_RECORD).
void Delivery::classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time,
                       ULONG pid, ULONG tid, USHORT processor, const void* data, std::size_t size) {
  EVENT_TRACE t{};
  t.BufferContext.ProcessorIndex = processor;
  t.BufferContext.LoggerId = logger_id_;
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
  if (logfile_.EventCallback != nullptr) logfile_.EventCallback(&t);
}

}  // namespace etwrt
