// etwrt: the realtime consumer API (OpenTraceA, ProcessTrace, CloseTrace). OpenTraceA maps the
// session's pool (its fd comes from the broker). The pool's hub (consumer_hub.h) reads it and
// queues its records for every ProcessTrace consuming that session; ProcessTrace hands them to
// the consumer's callbacks (consumer_delivery.h) on its own thread.
#include "client.h"
#include "etl/file_consumer.h"
#include "consumer_delivery.h"
#include "consumer_hub.h"
#include "consumer_open.h"
#include "replies.h"
#include "trace_handles.h"
#include "trace_properties.h"
#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;
using etwrt::BatchPtr;
using etwrt::Client;
using etwrt::Delivery;
namespace dataplane = etwrt::dataplane;
using etwrt::Hub;
using etwrt::SessionPool;
using etwrt::Subscriber;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;
constexpr ULONG kMaxHandles = 64;  // ProcessTrace: at most 64 handles (MAXIMUM_WAIT_OBJECTS).
struct Consumer : etwrt::TraceHandleState {
  // etwrt's own copy of the caller's record, made by OpenTrace: the caller's may be a local of
  // a function that has returned by the time ProcessTrace runs (Windows code does that), and
  // BufferCallback gets this copy, as Windows' gets its own.
  EVENT_TRACE_LOGFILEA logfile{};
  std::string logger_name;          // UTF-8, what the broker knows the session by.
  std::u16string wide_logger_name;  // OpenTraceW: logfile.LoggerName points here.
  SessionPool* pool = nullptr;      // Null until attached: opened before the session ran.
  TRACE_LOGFILE_HEADER header{};    // ReservedFlags: the session's clock (ClientContext).
  USHORT logger_id = 0;             // the session handle's low 16 bits, as a file's buffers say
#if defined(ETWRT_MUTANTS)
  PEVENT_TRACE_LOGFILEA caller = nullptr;  // Mutant logfile-pointer-kept: the caller's record.
#endif
};

etwrt::TraceHandles<Consumer> g_consumers;

void fill_header(Consumer& c, const json& p) {
  TRACE_LOGFILE_HEADER& h = c.header;
  h.BufferSize = p.at("buffer_size").get<ULONG>() * 1024;
  h.VersionDetail.MajorVersion = 10;
  h.ProviderVersion = 0;
  h.NumberOfProcessors = static_cast<ULONG>(std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF)));
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
  h.BootTime.QuadPart = etwrt::kUnixEpochAsFileTime;
  c.logger_id = static_cast<USHORT>(p.at("handle").get<std::uint64_t>() & 0xFFFF);
}

// Opens the session `c` names (the broker's "open" and its pool): ERROR_SUCCESS with `c.pool`
// and `c.header` set, else the broker's status (ERROR_WMI_INSTANCE_NOT_FOUND: no such session,
// ERROR_BAD_PATHNAME: not realtime, ERROR_ACCESS_DENIED) or the fault's. Throws only on faults
// of its own (memory, threads), not on a bad reply.
ULONG attach(Consumer& c) {
  Client& client = Client::instance();
  etwrt::ClientReply reply = client.call({{"op", "open"}, {"name", c.logger_name}}, kCallLimit);
  // The descriptor, if the reply brought one, is ours to close whatever else the reply says.
  const auto fd_field = reply.body.find("fd");
  const int fd =
      fd_field != reply.body.end() && fd_field->is_number_integer() ? fd_field->get<int>() : -1;
  ULONG status = etwrt::reply_status(reply, "OpenTraceA");
  const auto pool_field = reply.body.find("pool");
  try {
    if (status != ERROR_SUCCESS) throw std::runtime_error("no session to open");
    if (fd < 0 || pool_field == reply.body.end() || !pool_field->is_number_unsigned()) {
      throw std::runtime_error("the broker's reply names no pool");
    }
    fill_header(c, reply.body.at("properties"));
  } catch (const std::exception& e) {
    if (status == ERROR_SUCCESS) {
      std::fprintf(stderr, "etwrt: OpenTraceA: %s\n", e.what());
      status = ERROR_INVALID_DATA;
    }
    if (fd >= 0) ::close(fd);
    return status;
  }
  const std::uint64_t pool_id = pool_field->get<std::uint64_t>();
  c.pool = client.adopt_pool(pool_id, fd, 0, reply.body.value("index", std::uint32_t{0}),
                             reply.body.value("group", pool_id));
  if (c.pool == nullptr) return ERROR_INVALID_DATA;
  c.logfile.LogfileHeader = c.header;
  c.logfile.BufferSize = c.header.BufferSize;
  return ERROR_SUCCESS;
}

// The session is not there (yet), or not realtime: OpenTrace succeeds anyway, as on Windows,
// and ProcessTrace attaches then or fails with ERROR_WMI_INSTANCE_NOT_FOUND.
bool not_running(ULONG status) {
  return status == ERROR_WMI_INSTANCE_NOT_FOUND || status == ERROR_BAD_PATHNAME;
}

// OpenTrace's work; `wide_name` is OpenTraceW's LoggerName (NULL for OpenTraceA). Sets the
// thread's last error on failure, as the OpenTrace page says.
TRACEHANDLE open_trace(PEVENT_TRACE_LOGFILEA Logfile, const char16_t* wide_name) {
  // A realtime session (log files went to the trace-file reader before).
  if (Logfile->LoggerName == nullptr) return etwrt::fail_open(ERROR_BAD_PATHNAME);
  if ((Logfile->ProcessTraceMode & PROCESS_TRACE_MODE_REAL_TIME) == 0) {
    return etwrt::fail_open(ERROR_INVALID_PARAMETER);  // The page: REAL_TIME with a LoggerName.
  }
  auto consumer = std::make_unique<Consumer>();
  Consumer& c = *consumer;
  c.logfile = *Logfile;
  c.logger_name = Logfile->LoggerName;
  c.logfile.LoggerName = c.logger_name.data();
  c.logfile.LogFileName = nullptr;
  if (wide_name != nullptr) {
    c.wide_logger_name = wide_name;
    char16_t* wide = c.wide_logger_name.data();
    std::memcpy(&c.logfile.LoggerName, &wide, sizeof wide);  // The W record's LPWSTR.
  }
  const ULONG status = attach(c);
  if (status != ERROR_SUCCESS && !not_running(status)) return etwrt::fail_open(status);
#if defined(ETWRT_MUTANTS)
  // Mutant: OpenTrace of a session that is not running yet fails, as etwrt's first one did.
  if (status != ERROR_SUCCESS && etwrt::mutant::active("open-needs-running-session")) {
    return etwrt::fail_open(status);
  }
  // Mutant: ProcessTrace reads the caller's record instead of etwrt's copy.
  if (etwrt::mutant::active("logfile-pointer-kept")) c.caller = Logfile;
#endif
  if (status == ERROR_SUCCESS) {
    Logfile->LogfileHeader = c.header;
    Logfile->BufferSize = c.header.BufferSize;
    Logfile->IsKernelTrace = 0;
  }
  return g_consumers.add(std::move(consumer));
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

// Attaches the claimed consumers opened before their session ran: ERROR_WMI_INSTANCE_NOT_FOUND
// when it still is not running or not realtime (the ProcessTrace page). Then the page's rule:
// the handles of one real-time session only, else ERROR_INVALID_PARAMETER.
ULONG attach_consumers(const std::vector<Consumer*>& consumers) {
  for (Consumer* c : consumers) {
    if (c->pool != nullptr) continue;
    const ULONG status = attach(*c);
    if (not_running(status)) return ERROR_WMI_INSTANCE_NOT_FOUND;
    if (status != ERROR_SUCCESS) return status;
  }
  for (Consumer* c : consumers) {
    if (c->pool != consumers.front()->pool) return ERROR_INVALID_PARAMETER;
  }
  return ERROR_SUCCESS;
}

// One handle of a ProcessTrace call: its consumer, its place at the pool's hub, its delivery.
struct Active {
  Consumer* consumer;
  Hub* hub;
  std::unique_ptr<Subscriber> sub;
  std::unique_ptr<Delivery> delivery;
  bool done = false;
};

// The consumer's BufferCallback after a step that delivered `items` events: ERROR_CANCELLED
// when it returned FALSE.
ULONG buffer_done(Active& a, std::size_t items) {
  if (items == 0) return ERROR_SUCCESS;
  EVENT_TRACE_LOGFILEA* l = &a.consumer->logfile;
  ++l->BuffersRead;
  l->Filled = static_cast<ULONG>(items);
  if (l->BufferCallback != nullptr && l->BufferCallback(l) == FALSE) return ERROR_CANCELLED;
  return ERROR_SUCCESS;
}

// The direct path (Hub::direct_poll): this thread polls the pool's reader and each record
// reaches the callbacks from the pool's memory, a poll at a time, until the hub takes the
// reader back (the caller then goes on with take()), CloseTrace, or BufferCallback's FALSE.
ULONG direct_steps(Active& a) {
  Delivery& d = *a.delivery;
  d.set_since(a.sub->since_ns);
  for (;;) {
    if (a.consumer->close_requested.load(std::memory_order_acquire)) {
      a.done = true;
      return ERROR_SUCCESS;
    }
    if (!a.hub->direct_poll(d)) return ERROR_SUCCESS;
    if (const ULONG status = buffer_done(a, d.take_delivered()); status != ERROR_SUCCESS) {
      return status;
    }
  }
}

// Delivers what the hub queued for `a` since the last step, then the consumer's BufferCallback
// if that held events; then the direct path, when the hub grants it. ERROR_CANCELLED when
// BufferCallback returned FALSE; once nothing more will come (or CloseTrace was called),
// `a.done` and the subscriber's status.
ULONG delivery_step(Active& a, std::deque<BatchPtr>& batches) {
  if (a.consumer->close_requested.load(std::memory_order_acquire)) {
    a.done = true;
    return ERROR_SUCCESS;
  }
  batches.clear();
  bool direct = false;
  const bool more = a.hub->take(a.sub.get(), batches, direct);
#if defined(ETWRT_MUTANTS)
  // Mutant: each batch's records reach the consumer newest first.
  if (etwrt::mutant::active("records-out-of-order")) {
    for (BatchPtr& b : batches) {
      auto reversed = std::make_shared<etwrt::Batch>(*b);
      std::reverse(reversed->entries.begin(), reversed->entries.end());
      b = reversed;
    }
  }
#endif
  a.delivery->set_since(a.sub->since_ns);
  if (const ULONG status = buffer_done(a, a.delivery->deliver(batches)); status != ERROR_SUCCESS) {
    return status;
  }
  if (direct) return direct_steps(a);
  if (more) return ERROR_SUCCESS;
  a.done = true;
  return a.sub->error;
}

// ProcessTrace's work once its handles are claimed: delivers each consumer's events in turn
// until every session ended, a consumer was closed, or a BufferCallback said stop.
ULONG process_consumers(const std::vector<Consumer*>& consumers, const FILETIME* start,
                        const FILETIME* end) {
  std::vector<Active> active;
  for (Consumer* c : consumers) {
    EVENT_TRACE_LOGFILEA* logfile = &c->logfile;
#if defined(ETWRT_MUTANTS)
    if (c->caller != nullptr) logfile = c->caller;
#endif
    active.push_back({c, &etwrt::hub_of(c->pool), std::make_unique<Subscriber>(),
                      std::make_unique<Delivery>(*logfile, c->header, *c->pool, c->logger_id)});
    active.back().delivery->set_window(start, end);
  }
  // Joined before the header event is delivered (so a consumer that saw it is attached);
  // records queue meanwhile and reach the callback after it, on this thread.
  // One handle: its thread may read the pool itself (Hub::direct_poll). Several take turns,
  // so each gets its records from its hub.
  bool direct = active.size() == 1;
#if defined(ETWRT_MUTANTS)
  // The mutant reverses the hub's batches: it keeps this call on the hub's path.
  if (etwrt::mutant::active("records-out-of-order")) direct = false;
#endif
  for (Active& a : active) a.sub->wants_direct = direct;
  for (Active& a : active) a.hub->join(a.sub.get());
  for (Active& a : active) a.delivery->header_event();
  ULONG status = ERROR_SUCCESS;
  std::size_t remaining = active.size();
  std::deque<BatchPtr> batches;
  while (remaining > 0 && status == ERROR_SUCCESS) {
    for (Active& a : active) {
      if (a.done) continue;
      const ULONG step = delivery_step(a, batches);
      if (a.done) --remaining;
      if (step != ERROR_SUCCESS) status = step;
      if (status == ERROR_CANCELLED) break;  // The BufferCallback's word is final at once.
    }
  }
  for (Active& a : active) a.hub->leave(a.sub.get());
  return status;
}

}  // namespace

namespace etwrt {

TRACEHANDLE fail_open(ULONG status) {
  SetLastError(status);
  return INVALID_PROCESSTRACE_HANDLE;
}

TRACEHANDLE open_trace(PEVENT_TRACE_LOGFILEA logfile, const char16_t* wide_name) {
  if (logfile == nullptr) return fail_open(ERROR_INVALID_PARAMETER);
  try {
    // A log file (no PROCESS_TRACE_MODE_REAL_TIME): the trace-file reader (etl/).
    if (logfile->LogFileName != nullptr &&
        (logfile->ProcessTraceMode & PROCESS_TRACE_MODE_REAL_TIME) == 0) {
      return etl::open_file_trace(*logfile);
    }
    return ::open_trace(logfile, wide_name);
  } catch (...) {
    return fail_open(fault_status(wide_name != nullptr ? "OpenTraceW" : "OpenTraceA"));
  }
}

}  // namespace etwrt

extern "C" {

TRACEHANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile) {
  return etwrt::open_trace(Logfile, nullptr);
}

ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime) {
  return etwrt::guarded("ProcessTrace", [&]() -> ULONG {
    if (const ULONG check = check_process_trace(HandleArray, HandleCount, StartTime, EndTime);
        check != ERROR_SUCCESS) {
      return check;
    }
    // File handles go to the trace-file reader, all of them or none (etwrt choice).
    const auto files =
        static_cast<ULONG>(std::count_if(HandleArray, HandleArray + HandleCount, [](TRACEHANDLE h) {
          return etwrt::etl::is_file_handle(h);
        }));
    if (files == HandleCount) {
      return etwrt::etl::process_file_traces(HandleArray, HandleCount, StartTime, EndTime);
    }
    if (files > 0) return ERROR_INVALID_PARAMETER;
    std::vector<Consumer*> consumers;
    if (const ULONG claim = g_consumers.claim(HandleArray, HandleCount, consumers);
        claim != ERROR_SUCCESS) {
      return claim;
    }
    ULONG status = attach_consumers(consumers);
    if (status == ERROR_SUCCESS) status = process_consumers(consumers, StartTime, EndTime);
    g_consumers.release(consumers);
    return status;
  });
}

ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle) {
  return etwrt::guarded("CloseTrace", [&]() -> ULONG {
    if (etwrt::etl::is_file_handle(TraceHandle)) return etwrt::etl::close_file_trace(TraceHandle);
    return g_consumers.close(TraceHandle);
  });
}

}  // extern "C"
