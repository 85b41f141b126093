// Classic providers: RegisterTraceGuidsA, UnregisterTraceGuids, GetTraceLoggerHandle,
// GetTraceEnableLevel/Flags, TraceEvent and TraceMessage on top of etwrt's registrations
// and event path.
#include "classic.h"
#include "replies.h"

#include "wire.h"

#include <evntcons.h>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace etwrt {

ClassicEvent decode_trace_event(const EVENT_TRACE_HEADER& header, std::uint32_t buffer_bytes) {
  ClassicEvent out;
  const std::uint32_t limit =
      buffer_bytes > kClassicBufferOverhead ? buffer_bytes - kClassicBufferOverhead : 0;
  if ((header.Flags & WNODE_FLAG_TRACED_GUID) == 0) {
    out.status = ERROR_INVALID_FLAG_NUMBER;
    return out;
  }
  if (header.Size < sizeof(EVENT_TRACE_HEADER)) {
    out.status = ERROR_INVALID_PARAMETER;
    return out;
  }
  if (header.Size >= limit) {
    out.status = ERROR_MORE_DATA;
    return out;
  }
  if ((header.Flags & WNODE_FLAG_USE_GUID_PTR) != 0) {
    if (header.GuidPtr == 0) {
      out.status = ERROR_INVALID_PARAMETER;
      return out;
    }
    std::memcpy(&out.guid, reinterpret_cast<const void*>(header.GuidPtr), sizeof(GUID));
  } else {
    out.guid = header.Guid;
  }
  const std::size_t tail = header.Size - sizeof(EVENT_TRACE_HEADER);
  const auto* after = reinterpret_cast<const std::byte*>(&header) + sizeof(EVENT_TRACE_HEADER);
  if ((header.Flags & WNODE_FLAG_USE_MOF_PTR) != 0) {
    // The MOF_FIELDs follow the header; Size counts them, not the data they point to.
    if (tail % sizeof(MOF_FIELD) != 0 || tail / sizeof(MOF_FIELD) > MAX_MOF_FIELDS) {
      out.status = ERROR_INVALID_PARAMETER;
      return out;
    }
    std::uint64_t total = sizeof(EVENT_TRACE_HEADER);
    for (std::size_t i = 0; i < tail / sizeof(MOF_FIELD); ++i) {
      MOF_FIELD field;
      std::memcpy(&field, after + i * sizeof(MOF_FIELD), sizeof field);
      if (field.Length != 0 && field.DataPtr == 0) {
        out.status = ERROR_INVALID_PARAMETER;
        return out;
      }
      total += field.Length;
      EVENT_DATA_DESCRIPTOR d{};
      d.Ptr = field.DataPtr;
      d.Size = field.Length;
      out.data.push_back(d);
    }
    if (total >= limit) {
      out.data.clear();
      out.status = ERROR_MORE_DATA;
      return out;
    }
  } else if (tail > 0) {
    EVENT_DATA_DESCRIPTOR d{};
    d.Ptr = reinterpret_cast<ULONGLONG>(after);
    d.Size = static_cast<ULONG>(tail);
    out.data.push_back(d);
  }
  out.descriptor.Opcode = header.Class.Type;
  out.descriptor.Level = header.Class.Level;
  out.descriptor.Version = static_cast<UCHAR>(header.Class.Version & 0xff);
  return out;
}

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;

// What GetTraceLoggerHandle hands out: one per (registration, enabling session), so that
// GetTraceEnableLevel/Flags answer for this provider, as Windows' logger handles do.
struct Logger {
  SessionPool* pool = nullptr;
  UCHAR level = 0;
  ULONG flags = 0;
  bool active = false;  // false once the session disabled the provider or lost it
};

struct ClassicRegistration {
  Registration base;
  WMIDPREQUEST request = nullptr;
  void* request_context = nullptr;
  Logger* current = nullptr;
  std::vector<std::unique_ptr<Logger>> loggers;
};

// The process's classic registrations and their loggers; handles are checked here before
// they are used, so a stale or made-up handle is refused rather than dereferenced.
class ClassicRegistry {
 public:
  static ClassicRegistry& instance() {
    static ClassicRegistry* registry = new ClassicRegistry();  // Outlives late callbacks.
    return *registry;
  }
  std::mutex mu;
  std::set<ClassicRegistration*> registrations;
  std::map<TRACEHANDLE, Logger*> loggers;
};

TRACEHANDLE handle_of(const Logger* logger) { return reinterpret_cast<TRACEHANDLE>(logger); }

// The enable callback of a classic registration: ControlCallback with WMI_ENABLE_EVENTS and
// a WNODE_HEADER whose HistoricalContext is the logger handle, or WMI_DISABLE_EVENTS.
void WINAPI classic_callback(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG any, ULONGLONG,
                             PEVENT_FILTER_DESCRIPTOR, PVOID context) {
  auto* r = static_cast<ClassicRegistration*>(context);
  ClassicRegistry& registry = ClassicRegistry::instance();
  WNODE_HEADER wnode{};
  wnode.BufferSize = sizeof wnode;
  wnode.Guid = r->base.guid;
  wnode.Flags = WNODE_FLAG_TRACED_GUID;
  WMIDPREQUESTCODE code;
  {
    std::lock_guard lock(registry.mu);
    if (is_enabled == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
      // The enabling session, as the notification just published it (a classic provider has
      // one; if several enabled it before it registered, the latest slot wins).
      std::array<Target, kMaxSessionsPerProvider> targets;
      const std::size_t n = r->base.table.collect(0, 0, targets);
      if (n == 0 || targets[n - 1].sink == nullptr) return;  // Gone again; a disable follows.
      auto* pool = static_cast<SessionPool*>(targets[n - 1].sink);
      Logger* logger = nullptr;
      for (auto& l : r->loggers) {
        if (l->pool == pool) logger = l.get();
      }
      if (logger == nullptr) {
        r->loggers.push_back(std::make_unique<Logger>());
        logger = r->loggers.back().get();
        logger->pool = pool;
        registry.loggers[handle_of(logger)] = logger;
      }
      if (r->current != nullptr && r->current != logger) r->current->active = false;
      logger->level = level;
      logger->flags = static_cast<ULONG>(any);  // EnableTrace's EnableFlag travels as MatchAny.
      logger->active = true;
      r->current = logger;
      code = WMI_ENABLE_EVENTS;
    } else if (is_enabled == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
      if (r->current == nullptr) return;
      wnode.HistoricalContext = handle_of(r->current);
      r->current->active = false;
      r->current = nullptr;
      code = WMI_DISABLE_EVENTS;
    } else {
      return;  // Capture state has no ControlCallback request for classic providers here.
    }
    if (code == WMI_ENABLE_EVENTS) wnode.HistoricalContext = handle_of(r->current);
  }
  ULONG size = sizeof wnode;
  r->request(code, r->request_context, &size, &wnode);
}

// The logger of a handle if it still enables its provider; copies out what a write needs.
bool active_logger(TRACEHANDLE handle, Logger& out) {
  ClassicRegistry& registry = ClassicRegistry::instance();
  std::lock_guard lock(registry.mu);
  auto it = registry.loggers.find(handle);
  if (it == registry.loggers.end() || !it->second->active) return false;
  out = *it->second;
  return !out.pool->stopped.load(std::memory_order_acquire);
}

// GetTraceEnableLevel's and GetTraceEnableFlags' read: a field of the handle's logger, else 0
// with ERROR_INVALID_HANDLE as the thread's last error.
template <class T>
T logger_field(TRACEHANDLE handle, T Logger::*field) {
  ClassicRegistry& registry = ClassicRegistry::instance();
  std::lock_guard lock(registry.mu);
  auto it = registry.loggers.find(handle);
  if (it != registry.loggers.end()) return (*it->second).*field;
  SetLastError(ERROR_INVALID_HANDLE);
  return 0;
}

ULONG trace_message(TRACEHANDLE LoggerHandle, ULONG MessageFlags, LPCGUID MessageGuid,
                    USHORT MessageNumber, va_list args) {
  if (LoggerHandle == 0 || MessageGuid == nullptr ||
      (MessageFlags & ~ULONG{TRACE_MESSAGE_FLAG_MASK}) != 0) {
    return ERROR_INVALID_PARAMETER;
  }
  std::vector<EVENT_DATA_DESCRIPTOR> data;
  std::size_t total = 0;
  for (;;) {
    void* p = va_arg(args, void*);
    if (p == nullptr) break;
    const std::size_t length = va_arg(args, std::size_t);
    if (data.size() == MAX_EVENT_DATA_DESCRIPTORS) return ERROR_INVALID_PARAMETER;
    total += length;
    EVENT_DATA_DESCRIPTOR d{};
    d.Ptr = reinterpret_cast<ULONGLONG>(p);
    d.Size = static_cast<ULONG>(length);
    data.push_back(d);
  }
  if (total >= TRACE_MESSAGE_MAXIMUM_SIZE) return ERROR_MORE_DATA;
  Logger logger;
  if (!active_logger(LoggerHandle, logger)) return ERROR_INVALID_HANDLE;
  // A WPP message: ProviderId is the message GUID, Id the message number, the arguments the
  // user data, and EVENT_HEADER_FLAG_TRACE_MESSAGE marks it (CON-WPP).
  EVENT_DESCRIPTOR descriptor{};
  descriptor.Id = MessageNumber;
  dataplane::EventInput in;
  in.provider_id = MessageGuid;
  in.descriptor = &descriptor;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(data.data(), data.size());
  in.extra_flags = EVENT_HEADER_FLAG_TRACE_MESSAGE;
  return write_to_pool(logger.pool, in);
}

}  // namespace
}  // namespace etwrt

extern "C" {

ULONG WMIAPI RegisterTraceGuidsA(WMIDPREQUEST RequestAddress, PVOID RequestContext,
                                 LPCGUID ControlGuid, ULONG GuidCount,
                                 PTRACE_GUID_REGISTRATION TraceGuidReg, LPCSTR, LPCSTR,
                                 PTRACEHANDLE RegistrationHandle) {
  return etwrt::guarded("RegisterTraceGuidsA", [&]() -> ULONG {
    using etwrt::ClassicRegistration;
    if (RequestAddress == nullptr || ControlGuid == nullptr || RegistrationHandle == nullptr ||
        (GuidCount > 0 && TraceGuidReg == nullptr)) {
      return ERROR_INVALID_PARAMETER;
    }
    for (ULONG i = 0; i < GuidCount; ++i) {
      if (TraceGuidReg[i].Guid == nullptr) return ERROR_INVALID_PARAMETER;
    }
    *RegistrationHandle = 0;
    auto r = std::make_unique<ClassicRegistration>();
    r->base.guid = *ControlGuid;
    r->base.callback = etwrt::classic_callback;
    r->base.context = r.get();
    r->request = RequestAddress;
    r->request_context = RequestContext;
    etwrt::Client& client = etwrt::Client::instance();
    if (!client.add_registration(&r->base)) return ERROR_NOT_ENOUGH_MEMORY;
    const std::uint64_t token = r->base.handle;
    nlohmann::json request = {{"op", "register"},
                              {"token", token},
                              {"guid", etwrt::guid_to_wire(*ControlGuid)},
                              {"classic", true}};
    etwrt::Registration* base = &r->base;
    const etwrt::ClientReply reply =
        client.call(request, etwrt::kCallLimit, [&client, base](const nlohmann::json& body) {
          client.publish_sessions(*base, body.value("sessions", nlohmann::json::array()));
        });
    ULONG status = etwrt::reply_status(reply, "RegisterTraceGuidsA");
    etwrt::PreEnabled pre;
    if (status == ERROR_SUCCESS) {
      try {
        pre = etwrt::read_pre_enabled(reply.body);
      } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "etwrt: RegisterTraceGuidsA: %s\n", e.what());
        status = ERROR_INVALID_DATA;
      }
    }
    // The broker answered, but not readably: it may hold the registration; drop it there too.
    if (status == ERROR_INVALID_DATA) {
      client.call({{"op", "unregister"}, {"token", token}}, etwrt::kCallLimit);
    }
    if (status != ERROR_SUCCESS) {
      client.remove_registration(&r->base);
      return status;
    }
    {
      etwrt::ClassicRegistry& registry = etwrt::ClassicRegistry::instance();
      std::lock_guard lock(registry.mu);
      registry.registrations.insert(r.get());
    }
    for (ULONG i = 0; i < GuidCount; ++i) {
      TraceGuidReg[i].RegHandle = reinterpret_cast<HANDLE>(r.get());
    }
    *RegistrationHandle = reinterpret_cast<TRACEHANDLE>(r.get());
    ClassicRegistration* registered = r.release();
    // Enabled already: the ControlCallback runs inside the registration, as Windows does.
    if (pre.enabled) {
      etwrt::Client::invoke(registered->base, GUID_NULL, 1, pre.level, pre.any, pre.all, nullptr);
    }
    return ERROR_SUCCESS;
  });
}

ULONG WMIAPI UnregisterTraceGuids(TRACEHANDLE RegistrationHandle) {
  return etwrt::guarded("UnregisterTraceGuids", [&]() -> ULONG {
    auto* r = reinterpret_cast<etwrt::ClassicRegistration*>(RegistrationHandle);
    etwrt::ClassicRegistry& registry = etwrt::ClassicRegistry::instance();
    {
      std::lock_guard lock(registry.mu);
      if (RegistrationHandle == 0 || registry.registrations.erase(r) == 0) {
        return ERROR_INVALID_HANDLE;
      }
    }
    etwrt::Client& client = etwrt::Client::instance();
    // Waits for a running callback of it, so nothing touches `r` after it is deleted.
    const std::uint64_t token = r->base.handle;
    client.remove_registration(&r->base);
    client.call({{"op", "unregister"}, {"token", token}}, etwrt::kCallLimit);
    r->base.table.publish(nullptr, 0);
    {
      std::lock_guard lock(registry.mu);
      for (auto& l : r->loggers) registry.loggers.erase(etwrt::handle_of(l.get()));
    }
    delete r;
    return ERROR_SUCCESS;
  });
}

// The three pages: on failure "call GetLastError" (GetTraceLoggerHandle returns
// INVALID_HANDLE_VALUE; the other two 0, which a caller tells from a controller's 0 by setting
// ERROR_SUCCESS first). The codes are etwrt's choice (the pages name none): a NULL Buffer
// ERROR_INVALID_PARAMETER, a handle of no enabling session ERROR_INVALID_HANDLE. Success
// leaves the last error as it was.
TRACEHANDLE WMIAPI GetTraceLoggerHandle(PVOID Buffer) {
  constexpr auto kInvalid = static_cast<TRACEHANDLE>(-1);  // INVALID_HANDLE_VALUE
  if (Buffer == nullptr) {
    SetLastError(ERROR_INVALID_PARAMETER);
    return kInvalid;
  }
  WNODE_HEADER wnode;
  std::memcpy(&wnode, Buffer, sizeof wnode);
  etwrt::ClassicRegistry& registry = etwrt::ClassicRegistry::instance();
  std::lock_guard lock(registry.mu);
  if (!registry.loggers.contains(wnode.HistoricalContext)) {
    SetLastError(ERROR_INVALID_HANDLE);
    return kInvalid;
  }
  return wnode.HistoricalContext;
}

UCHAR WMIAPI GetTraceEnableLevel(TRACEHANDLE TraceHandle) {
  return etwrt::logger_field(TraceHandle, &etwrt::Logger::level);
}

ULONG WMIAPI GetTraceEnableFlags(TRACEHANDLE TraceHandle) {
  return etwrt::logger_field(TraceHandle, &etwrt::Logger::flags);
}

ULONG WMIAPI TraceEvent(TRACEHANDLE TraceHandle, PEVENT_TRACE_HEADER EventTrace) {
  return etwrt::guarded("TraceEvent", [&]() -> ULONG {
    if (TraceHandle == 0 || EventTrace == nullptr) return ERROR_INVALID_PARAMETER;
    etwrt::Logger logger;
    if (!etwrt::active_logger(TraceHandle, logger)) return ERROR_INVALID_HANDLE;
    const etwrt::ClassicEvent event =
        etwrt::decode_trace_event(*EventTrace, logger.pool->pool.buffer_bytes());
    if (event.status != ERROR_SUCCESS) return event.status;
    etwrt::dataplane::EventInput in;
    in.provider_id = &event.guid;
    in.descriptor = &event.descriptor;
    in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(event.data.data(), event.data.size());
    in.extra_flags = EVENT_HEADER_FLAG_CLASSIC_HEADER;
    return etwrt::write_to_pool(logger.pool, in);
  });
}

ULONG TraceMessageVa(TRACEHANDLE LoggerHandle, ULONG MessageFlags, LPCGUID MessageGuid,
                     USHORT MessageNumber, va_list MessageArgList) {
  return etwrt::guarded("TraceMessageVa", [&]() -> ULONG {
    va_list args;
    va_copy(args, MessageArgList);
    const ULONG status =
        etwrt::trace_message(LoggerHandle, MessageFlags, MessageGuid, MessageNumber, args);
    va_end(args);
    return status;
  });
}

ULONG TraceMessage(TRACEHANDLE LoggerHandle, ULONG MessageFlags, LPCGUID MessageGuid,
                   USHORT MessageNumber, ...) {
  va_list args;
  va_start(args, MessageNumber);
  const ULONG status = etwrt::guarded("TraceMessage", [&] {
    return etwrt::trace_message(LoggerHandle, MessageFlags, MessageGuid, MessageNumber, args);
  });
  va_end(args);
  return status;
}

}  // extern "C"
