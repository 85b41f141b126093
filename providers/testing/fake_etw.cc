#include "fake_etw.h"

#include <tdh.h>

#include <cstring>
#include <map>

namespace etwh::fake_etw {
namespace {

struct Registration {
  GUID provider;
  PENABLECALLBACK callback;
  PVOID context;
};

// The fake stands in for a process-wide system service, so its state is process-wide too.
struct State {
  std::mutex mutex;
  Log log;
  std::map<REGHANDLE, Registration> registrations;
  REGHANDLE next_handle = 1;
  TRACEHANDLE next_session = 0x100;
};

State& state() {
  static State s;
  return s;
}

std::vector<std::uint8_t> copy_properties(const EVENT_TRACE_PROPERTIES* p) {
  if (p == nullptr) return {};
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(p);
  return {bytes, bytes + p->Wnode.BufferSize};
}

// The fields every enable API logs; the caller adds its API's own.
EnableCall enable_call(const char* api, TRACEHANDLE handle, LPCGUID provider, ULONG code,
                       UCHAR level, ULONGLONG any, ULONGLONG all) {
  EnableCall call;
  call.api = api;
  call.handle = handle;
  call.provider = *provider;
  call.control_code = code;
  call.level = level;
  call.match_any = any;
  call.match_all = all;
  return call;
}

std::vector<Filter> copy_filters(const EVENT_FILTER_DESCRIPTOR* d, ULONG count) {
  std::vector<Filter> out;
  for (ULONG i = 0; d != nullptr && i < count; ++i) {
    const auto* b = reinterpret_cast<const std::uint8_t*>(d[i].Ptr);
    out.push_back({d[i].Type, b == nullptr ? std::vector<std::uint8_t>{}
                                           : std::vector<std::uint8_t>(b, b + d[i].Size)});
  }
  return out;
}

// Calls the callbacks outside the lock, as a real runtime would, so that they may call back in.
void deliver(const GUID& provider, const GUID* source, ULONG code, UCHAR level, ULONGLONG any,
             ULONGLONG all, PEVENT_FILTER_DESCRIPTOR filter) {
  std::vector<Registration> targets;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (const auto& [handle, r] : state().registrations) {
      if (r.provider == provider && r.callback != nullptr) targets.push_back(r);
    }
  }
  for (const auto& r : targets) r.callback(source, code, level, any, all, filter, r.context);
}

}  // namespace

Log& log() { return state().log; }
std::mutex& mutex() { return state().mutex; }

void reset() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().log = Log{};
}

}  // namespace etwh::fake_etw

using etwh::fake_etw::state;

extern "C" {

ULONG WMIAPI StartTraceA(PTRACEHANDLE handle, LPCSTR name, PEVENT_TRACE_PROPERTIES properties) {
  std::lock_guard<std::mutex> lock(state().mutex);
  etwh::fake_etw::StartCall call;
  call.handle_null = handle == nullptr;
  if (name != nullptr) call.name = name;
  call.properties = etwh::fake_etw::copy_properties(properties);
  state().log.starts.push_back(std::move(call));
  if (handle != nullptr) *handle = state().next_session++;
  return ERROR_SUCCESS;
}

ULONG WMIAPI ControlTraceA(TRACEHANDLE handle, LPCSTR name, PEVENT_TRACE_PROPERTIES properties,
                           ULONG code) {
  std::lock_guard<std::mutex> lock(state().mutex);
  etwh::fake_etw::ControlCall call{handle, std::nullopt, code,
                                   etwh::fake_etw::copy_properties(properties)};
  if (name != nullptr) call.name = name;
  state().log.controls.push_back(std::move(call));
  if (properties != nullptr) {
    ULONG v = state().log.control_fill;
    properties->BufferSize = v + 1;
    properties->MinimumBuffers = v + 2;
    properties->MaximumBuffers = v + 3;
    properties->NumberOfBuffers = v + 4;
    properties->FreeBuffers = v + 5;
    properties->EventsLost = v + 6;
    properties->BuffersWritten = v + 7;
    properties->LogBuffersLost = v + 8;
    properties->RealTimeBuffersLost = v + 9;
    properties->FlushTimer = v + 10;
    properties->LogFileMode = v + 11;
    std::strcpy(reinterpret_cast<char*>(properties) + properties->LoggerNameOffset, "fake-session");
  }
  return ERROR_SUCCESS;
}

ULONG WMIAPI EnableTraceEx2(TRACEHANDLE handle, LPCGUID provider, ULONG code, UCHAR level,
                            ULONGLONG any, ULONGLONG all, ULONG timeout,
                            PENABLE_TRACE_PARAMETERS params) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto call =
        etwh::fake_etw::enable_call("EnableTraceEx2", handle, provider, code, level, any, all);
    call.timeout = timeout;
    if (params != nullptr) {
      call.has_parameters = true;
      call.parameters = *params;
      call.filters =
          etwh::fake_etw::copy_filters(params->EnableFilterDesc, params->FilterDescCount);
    }
    state().log.enables.push_back(std::move(call));
  }
  etwh::fake_etw::deliver(
      *provider, params != nullptr ? &params->SourceId : &GUID_NULL, code, level, any, all,
      params != nullptr && params->FilterDescCount > 0 ? params->EnableFilterDesc : nullptr);
  return ERROR_SUCCESS;
}

ULONG WMIAPI EnableTraceEx(LPCGUID provider, LPCGUID source, TRACEHANDLE handle, ULONG code,
                           UCHAR level, ULONGLONG any, ULONGLONG all, ULONG property,
                           PEVENT_FILTER_DESCRIPTOR filter) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto call =
        etwh::fake_etw::enable_call("EnableTraceEx", handle, provider, code, level, any, all);
    if (source != nullptr) call.source_id = *source;
    call.enable_property = property;
    call.filters = etwh::fake_etw::copy_filters(filter, filter != nullptr ? 1 : 0);
    state().log.enables.push_back(std::move(call));
  }
  etwh::fake_etw::deliver(*provider, source, code, level, any, all, filter);
  return ERROR_SUCCESS;
}

ULONG WMIAPI EnableTrace(ULONG enable, ULONG flags, ULONG level, LPCGUID provider,
                         TRACEHANDLE handle) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto call = etwh::fake_etw::enable_call("EnableTrace", handle, provider, enable,
                                          static_cast<UCHAR>(level), flags, 0);
  state().log.enables.push_back(std::move(call));
  return ERROR_SUCCESS;
}

ULONG EVNTAPI EventRegister(LPCGUID provider, PENABLECALLBACK callback, PVOID context,
                            PREGHANDLE handle) {
  std::lock_guard<std::mutex> lock(state().mutex);
  *handle = state().next_handle++;
  state().registrations[*handle] = {*provider, callback, context};
  return ERROR_SUCCESS;
}

ULONG EVNTAPI EventUnregister(REGHANDLE handle) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().registrations.erase(handle) == 1 ? ERROR_SUCCESS : ERROR_INVALID_HANDLE;
}

ULONG EVNTAPI EventSetInformation(REGHANDLE, EVENT_INFO_CLASS, PVOID, ULONG) {
  return ERROR_SUCCESS;
}

BOOLEAN EVNTAPI EventEnabled(REGHANDLE, PCEVENT_DESCRIPTOR) { return FALSE; }

BOOLEAN EVNTAPI EventProviderEnabled(REGHANDLE, UCHAR, ULONGLONG) { return FALSE; }

ULONG EVNTAPI EventWrite(REGHANDLE, PCEVENT_DESCRIPTOR, ULONG, PEVENT_DATA_DESCRIPTOR) {
  return ERROR_SUCCESS;
}

// The thread's last error, as kernel32 keeps it: the agent's last_error op and its consumer
// read it after a failed call.
namespace {
thread_local DWORD last_error = ERROR_SUCCESS;
}
DWORD WINAPI GetLastError(void) { return last_error; }
void WINAPI SetLastError(DWORD code) { last_error = code; }

// No consumer side: OpenTraceA fails, as on a platform without realtime sessions.
TRACEHANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA) { return INVALID_PROCESSTRACE_HANDLE; }

ULONG WMIAPI ProcessTrace(PTRACEHANDLE, ULONG, LPFILETIME, LPFILETIME) {
  return ERROR_INVALID_HANDLE;
}

ULONG WMIAPI CloseTrace(TRACEHANDLE) { return ERROR_INVALID_HANDLE; }

// No classic providers either: the agent's classic ops link, and report the refusal.
ULONG WMIAPI RegisterTraceGuidsA(WMIDPREQUEST, PVOID, LPCGUID, ULONG, PTRACE_GUID_REGISTRATION,
                                 LPCSTR, LPCSTR, PTRACEHANDLE) {
  return ERROR_NOT_SUPPORTED;
}
ULONG WMIAPI UnregisterTraceGuids(TRACEHANDLE) { return ERROR_INVALID_HANDLE; }
TRACEHANDLE WMIAPI GetTraceLoggerHandle(PVOID) { return static_cast<TRACEHANDLE>(-1); }
UCHAR WMIAPI GetTraceEnableLevel(TRACEHANDLE) { return 0; }
ULONG WMIAPI GetTraceEnableFlags(TRACEHANDLE) { return 0; }
ULONG WMIAPI TraceEvent(TRACEHANDLE, PEVENT_TRACE_HEADER) { return ERROR_INVALID_HANDLE; }
ULONG TraceMessage(TRACEHANDLE, ULONG, LPCGUID, USHORT, ...) { return ERROR_INVALID_HANDLE; }

// No decoder: no event reaches a consumer here, and no manifest loads.
TDHSTATUS EVNTAPI TdhLoadManifest(PWSTR) { return ERROR_NOT_SUPPORTED; }
TDHSTATUS EVNTAPI TdhUnloadManifest(PWSTR) { return ERROR_NOT_SUPPORTED; }
TDHSTATUS EVNTAPI TdhGetEventInformation(PEVENT_RECORD, ULONG, PTDH_CONTEXT, PTRACE_EVENT_INFO,
                                         PULONG) {
  return ERROR_NOT_FOUND;
}
TDHSTATUS EVNTAPI TdhGetPropertySize(PEVENT_RECORD, ULONG, PTDH_CONTEXT, ULONG,
                                     PPROPERTY_DATA_DESCRIPTOR, ULONG*) {
  return ERROR_NOT_FOUND;
}
TDHSTATUS EVNTAPI TdhGetProperty(PEVENT_RECORD, ULONG, PTDH_CONTEXT, ULONG,
                                 PPROPERTY_DATA_DESCRIPTOR, ULONG, PBYTE) {
  return ERROR_NOT_FOUND;
}

}  // extern "C"
