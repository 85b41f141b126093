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
                   SessionPool& pool)
    : logfile_(logfile),
      header_(header),
      pool_(pool),
      offset_ns_(realtime_minus_monotonic_ns()),
      event_record_mode_((logfile.ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) != 0),
      file_time_stamps_((logfile.ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) == 0 ||
                        header.ReservedFlags == kClockSystemTime) {}

void Delivery::set_window(const FILETIME* start, const FILETIME* end) {
  if (start != nullptr) window_start_ = file_time_value(*start);
  if (end != nullptr) window_end_ = file_time_value(*end);
  windowed_ = start != nullptr || end != nullptr;
}

void Delivery::header_event() {
  TRACE_LOGFILE_HEADER header = header_;
  emit_synthetic(EventTraceGuid, EVENT_TRACE_TYPE_INFO, now(), &header, sizeof header, true);
}

std::size_t Delivery::deliver(const std::deque<BatchPtr>& batches, std::uint64_t since_ns) {
  std::size_t items = 0;
  dataplane::RecordView v;
  for (const BatchPtr& b : batches) {
    for (const std::uint64_t e : b->entries) {
      if (Batch::is_loss(e)) {
        deliver_loss(b->loss(e));
      } else if (!b->view(e, v) || !deliver_record(v, since_ns)) {
        continue;
      }
      ++items;
    }
  }
  return items;
}

void Delivery::deliver_loss(const dataplane::LossReport& loss) {
  logfile_.EventsLost += static_cast<ULONG>(loss.events_lost + loss.realtime_events_lost);
  losses(loss);
}

std::int64_t Delivery::file_time(std::uint64_t monotonic_ns) const {
  return kUnixEpochAsFileTime + (static_cast<std::int64_t>(monotonic_ns) + offset_ns_) / 100;
}

// FILETIME by default; with PROCESS_TRACE_MODE_RAW_TIMESTAMP, the session's clock (the
// header's ReservedFlags = ClientContext): QPC ticks at PerfFreq, system time as FILETIME,
// cycles at CpuSpeedInMHz (WNODE_HEADER page, rule CON-CLOCK).
std::int64_t Delivery::timestamp(std::uint64_t monotonic_ns) const {
  if (file_time_stamps_) return file_time(monotonic_ns);
  switch (header_.ReservedFlags) {
    case kClockCpuCycles: return static_cast<std::int64_t>(monotonic_ns);  // A 1000 MHz counter.
    default: return static_cast<std::int64_t>(monotonic_ns / 100);         // QPC at 10 MHz.
  }
}

// An event's TimeStamp. A Type 3 descriptor's override (tracelogging.h) is a value of the
// session's clock: given as is with RAW_TIMESTAMP, else converted from that clock.
std::int64_t Delivery::event_time(const dataplane::RecordView& v) const {
  if (!v.has_timestamp_override) return timestamp(v.timestamp_ns);
  const auto raw = static_cast<std::uint64_t>(v.timestamp_override);
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

void Delivery::record(const dataplane::RecordView& v) {
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
  EVENT_HEADER_EXTENDED_DATA_ITEM items[3];  // Each one used is cleared first.
  USHORT count = 0;
  if (v.has_related_activity_id) {
    items[count] = {};
    items[count].ExtType = EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID;
    items[count].DataSize = sizeof(GUID);
    items[count].DataPtr = reinterpret_cast<ULONGLONG>(&v.related_activity_id);
    ++count;
  }
  if (!v.provider_traits.empty()) {
    items[count] = {};
    items[count].ExtType = EVENT_HEADER_EXT_TYPE_PROV_TRAITS;
    items[count].DataSize = static_cast<USHORT>(v.provider_traits.size());
    items[count].DataPtr = reinterpret_cast<ULONGLONG>(v.provider_traits.data());
    ++count;
  }
  if (!v.event_schema.empty()) {
    items[count] = {};
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
  r.UserContext = logfile_.Context;
  if (logfile_.EventRecordCallback != nullptr) logfile_.EventRecordCallback(&r);
}

void Delivery::emit_synthetic(const GUID& provider, UCHAR opcode, std::int64_t time,
                              const void* data, std::size_t size, bool classic_header) {
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
  r.UserContext = logfile_.Context;
  if (logfile_.EventRecordCallback != nullptr) logfile_.EventRecordCallback(&r);
}

// The classic form (EventCallback without PROCESS_TRACE_MODE_EVENT_RECORD).
void Delivery::classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time,
                       ULONG pid, ULONG tid, const void* data, std::size_t size) {
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
  if (logfile_.EventCallback != nullptr) logfile_.EventCallback(&t);
}

}  // namespace etwrt
