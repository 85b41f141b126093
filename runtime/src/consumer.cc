// etwrt: the realtime consumer API (OpenTraceA, ProcessTrace, CloseTrace). OpenTraceA maps the
// session's pool (its fd comes from the broker); ProcessTrace attaches a dataplane Reader and
// turns its records into EVENT_RECORDs (or classic EVENT_TRACEs), after the synthetic header
// event and with RT_LostEvent pseudo-events ahead of the data that follows a loss.
#include "client.h"
#include "wire.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
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
  TRACE_LOGFILE_HEADER header{};
  bool processing = false;  // Guarded by g_mu.
  bool closed = false;      // Guarded by g_mu; CloseTrace during ProcessTrace.
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

std::int64_t file_time_now() {
  timespec real{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  return kUnixEpochAsFileTime + real.tv_sec * 10000000LL + real.tv_nsec / 100;
}

// Delivers one consumer's events: owns the conversion state of one ProcessTrace call.
class Delivery {
 public:
  explicit Delivery(Consumer& c) : c_(c), offset_ns_(realtime_minus_monotonic_ns()) {}

  bool event_record_mode() const {
    return (c_.logfile->ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) != 0;
  }

  std::int64_t timestamp(std::uint64_t monotonic_ns) const {
    if ((c_.logfile->ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) != 0) {
      return static_cast<std::int64_t>(monotonic_ns);  // etwrt's raw clock: monotonic ns.
    }
    return kUnixEpochAsFileTime +
           (static_cast<std::int64_t>(monotonic_ns) + offset_ns_) / 100;
  }

  // The synthetic first event: EventTraceGuid, Opcode 0, a TRACE_LOGFILE_HEADER as UserData.
  void header_event() {
    TRACE_LOGFILE_HEADER header = c_.header;
    emit_synthetic(EventTraceGuid, EVENT_TRACE_TYPE_INFO, file_time_now(), &header,
                   sizeof header, true);
  }

  // RT_LostEvent (etwrt choice for the payload: the counts, as ULONG64s, since no document
  // gives one): RTLostBuffer (33) = {buffers, events they held}, RTLostEvent (32) = {events}.
  void losses(const dataplane::LossReport& loss) {
    if (loss.realtime_buffers_lost > 0) {
      const std::uint64_t counts[2] = {loss.realtime_buffers_lost, loss.realtime_events_lost};
      emit_synthetic(RTLostEventGuid, 33, file_time_now(), counts, sizeof counts, false);
    }
    if (loss.events_lost > 0) {
      const std::uint64_t counts[1] = {loss.events_lost};
      emit_synthetic(RTLostEventGuid, 32, file_time_now(), counts, sizeof counts, false);
    }
  }

  void record(const dataplane::RecordView& v) {
    if (!event_record_mode()) {
      classic(v.provider_id, v.descriptor, timestamp(v.timestamp_ns), v.process_id, v.thread_id,
              v.user_data.data(), v.user_data.size());
      return;
    }
    EVENT_RECORD r{};
    r.EventHeader.Size = sizeof(EVENT_HEADER);
    r.EventHeader.Flags = static_cast<USHORT>(v.flags | EVENT_HEADER_FLAG_64_BIT_HEADER);
    r.EventHeader.ThreadId = v.thread_id;
    r.EventHeader.ProcessId = v.process_id;
    r.EventHeader.TimeStamp.QuadPart = timestamp(v.timestamp_ns);
    r.EventHeader.ProviderId = v.provider_id;
    r.EventHeader.EventDescriptor = v.descriptor;
    r.EventHeader.ActivityId = v.activity_id;
    EVENT_HEADER_EXTENDED_DATA_ITEM items[2] = {};
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
    r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER |
                          (classic_header ? EVENT_HEADER_FLAG_CLASSIC_HEADER : 0);
    r.EventHeader.TimeStamp.QuadPart = time;
    r.EventHeader.ProviderId = provider;
    r.EventHeader.EventDescriptor = d;
    r.UserDataLength = static_cast<USHORT>(size);
    r.UserData = const_cast<void*>(data);
    r.UserContext = c_.logfile->Context;
    if (c_.logfile->EventRecordCallback != nullptr) c_.logfile->EventRecordCallback(&r);
  }

  // The classic form (EventCallback without PROCESS_TRACE_MODE_EVENT_RECORD).
  void classic(const GUID& provider, const EVENT_DESCRIPTOR& d, std::int64_t time,
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
    if (c_.logfile->EventCallback != nullptr) c_.logfile->EventCallback(&t);
  }

  Consumer& c_;
  std::int64_t offset_ns_;
};

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
  h.PerfFreq.QuadPart = 10000000;
  h.StartTime.QuadPart = file_time_now();
  h.BootTime.QuadPart = kUnixEpochAsFileTime;
}

}  // namespace

extern "C" {

TRACEHANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile) {
  if (Logfile == nullptr) return INVALID_PROCESSTRACE_HANDLE;
  // etwrt delivers realtime sessions only; log files are not written (ERROR_NOT_SUPPORTED).
  if ((Logfile->ProcessTraceMode & PROCESS_TRACE_MODE_REAL_TIME) == 0 ||
      Logfile->LoggerName == nullptr) {
    return INVALID_PROCESSTRACE_HANDLE;
  }
  Client& client = Client::instance();
  etwrt::ClientReply reply = client.call({{"op", "open"}, {"name", Logfile->LoggerName}},
                                         kCallLimit);
  if (reply.status != ERROR_SUCCESS) return INVALID_PROCESSTRACE_HANDLE;
  const int fd = reply.body.value("fd", -1);
  if (reply.body.value("status", ERROR_NOT_SUPPORTED) != ERROR_SUCCESS || fd < 0) {
    if (fd >= 0) ::close(fd);
    return INVALID_PROCESSTRACE_HANDLE;
  }
  SessionPool* pool = client.adopt_pool(reply.body.at("pool").get<std::uint64_t>(), fd);
  if (pool == nullptr) return INVALID_PROCESSTRACE_HANDLE;
  auto consumer = std::make_unique<Consumer>();
  consumer->logfile = Logfile;
  consumer->pool = pool;
  fill_header(*consumer, reply.body.at("properties"));
  Logfile->LogfileHeader = consumer->header;
  Logfile->BufferSize = consumer->header.BufferSize;
  Logfile->IsKernelTrace = 0;
  std::lock_guard lock(g_mu);
  Consumer* c = consumer.release();
  g_consumers.insert(c);
  return reinterpret_cast<TRACEHANDLE>(c);
}

ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime) {
  (void)StartTime;  // Filters of file playback; a realtime session delivers what arrives.
  (void)EndTime;
  if (HandleArray == nullptr || HandleCount == 0 || HandleCount > kMaxHandles) {
    return ERROR_INVALID_PARAMETER;
  }
  std::vector<Consumer*> consumers;
  {
    std::lock_guard lock(g_mu);
    for (ULONG i = 0; i < HandleCount; ++i) {
      Consumer* c = find_locked(HandleArray[i]);
      if (c == nullptr || c->processing) {
        for (Consumer* taken : consumers) taken->processing = false;
        return ERROR_INVALID_HANDLE;
      }
      c->processing = true;
      consumers.push_back(c);
    }
  }
  struct Active {
    Consumer* consumer;
    std::unique_ptr<dataplane::Reader> reader;
    std::unique_ptr<Delivery> delivery;
    bool done = false;
  };
  std::vector<Active> active;
  ULONG status = ERROR_SUCCESS;
  for (Consumer* c : consumers) {
    Active a{c, nullptr, std::make_unique<Delivery>(*c)};
    dataplane::ReaderOptions options;
    options.eager_partial = true;  // Realtime: deliver as soon as committed.
    try {
      a.reader = std::make_unique<dataplane::Reader>(c->pool->pool, options);
    } catch (const dataplane::Error& e) {
      // etwrt limit: one realtime consumer per session at a time (the pool has one reader).
      std::fprintf(stderr, "etwrt: ProcessTrace: %s\n", e.what());
      status = ERROR_BUSY;
      break;
    }
    active.push_back(std::move(a));
  }
  if (status == ERROR_SUCCESS) {
    for (Active& a : active) a.delivery->header_event();
    std::size_t remaining = active.size();
    while (remaining > 0 && status == ERROR_SUCCESS) {
      std::size_t delivered = 0;
      for (Active& a : active) {
        if (a.done) continue;
        Delivery& d = *a.delivery;
        const auto on_record = [&d](const dataplane::RecordView& v) { d.record(v); };
        const auto on_loss = [&d, &a](const dataplane::LossReport& loss) {
          a.consumer->logfile->EventsLost +=
              static_cast<ULONG>(loss.events_lost + loss.realtime_events_lost);
          d.losses(loss);
        };
        const bool stopped = a.consumer->pool->stopped.load(std::memory_order_acquire);
        const bool closing = a.consumer->close_requested.load(std::memory_order_acquire);
        if (closing) {
          a.done = true;
          --remaining;
          continue;
        }
        std::size_t n = a.reader->poll(on_record, stopped, on_loss);
        if (stopped) {
          // The session is gone: deliver everything committed, then this handle is done.
          while (n > 0) n = a.reader->poll(on_record, true, on_loss);
          a.done = true;
          --remaining;
          continue;
        }
        if (n > 0) {
          delivered += n;
          EVENT_TRACE_LOGFILEA* l = a.consumer->logfile;
          ++l->BuffersRead;
          l->Filled = static_cast<ULONG>(n);
          if (l->BufferCallback != nullptr && l->BufferCallback(l) == FALSE) {
            status = ERROR_CANCELLED;
            break;
          }
        }
      }
      if (delivered == 0 && remaining > 0) std::this_thread::sleep_for(1ms);
    }
  }
  active.clear();  // Readers detach before their consumers may be freed.
  std::lock_guard lock(g_mu);
  for (Consumer* c : consumers) {
    c->processing = false;
    if (c->closed) {
      g_consumers.erase(c);
      delete c;
    }
  }
  return status;
}

ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle) {
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
}

}  // extern "C"
