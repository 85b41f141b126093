// The Win32 ETW entry points of libetwrt: argument checks in the calling process, then the
// broker through the process's Client.
#include "client.h"
#include "enable_filters.h"
#include "trace_properties.h"
#include "traits.h"
#include "wire.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <cstring>

namespace {

using json = nlohmann::json;
using etwrt::Client;
using etwrt::Registration;
using namespace std::chrono_literals;

// An upper bound for calls that have no timeout of their own, so that nothing hangs.
constexpr auto kCallLimit = 30s;

Registration* registration_of(REGHANDLE handle) {
  return reinterpret_cast<Registration*>(static_cast<std::uintptr_t>(handle));
}

// The data path is the next issue: until then no event is delivered. An event that no session
// accepts is rightly dropped (ERROR_SUCCESS); one that some session would accept must not be
// reported as delivered, so it gets ERROR_NOT_SUPPORTED. This is the seam for the event path.
ULONG write_seam(REGHANDLE handle, UCHAR level, ULONGLONG keyword) {
  if (handle == 0) return ERROR_INVALID_HANDLE;
  return registration_of(handle)->table.accepts(level, keyword) ? ERROR_NOT_SUPPORTED
                                                                : ERROR_SUCCESS;
}

void fill_properties(EVENT_TRACE_PROPERTIES* p, const json& q) {
  p->Wnode.HistoricalContext = q.at("handle").get<std::uint64_t>();
  GUID guid;
  if (etwrt::guid_from_wire(q.at("guid").get<std::string>(), guid)) p->Wnode.Guid = guid;
  p->BufferSize = q.at("buffer_size").get<ULONG>();
  p->MinimumBuffers = q.at("minimum_buffers").get<ULONG>();
  p->MaximumBuffers = q.at("maximum_buffers").get<ULONG>();
  p->MaximumFileSize = q.at("maximum_file_size").get<ULONG>();
  p->LogFileMode = q.at("log_file_mode").get<ULONG>();
  p->FlushTimer = q.at("flush_timer").get<ULONG>();
  p->EnableFlags = q.at("enable_flags").get<ULONG>();
  p->NumberOfBuffers = q.at("number_of_buffers").get<ULONG>();
  p->FreeBuffers = q.at("free_buffers").get<ULONG>();
  p->EventsLost = q.at("events_lost").get<ULONG>();
  p->BuffersWritten = q.at("buffers_written").get<ULONG>();
  p->LogBuffersLost = q.at("log_buffers_lost").get<ULONG>();
  p->RealTimeBuffersLost = q.at("real_time_buffers_lost").get<ULONG>();
  etwrt::write_logger_name(p, q.at("name").get<std::string>());
}

json filter_json(const etwrt::FilterBlob& blob) {
  return {{"type", blob.type}, {"data", etwrt::bytes_to_hex(blob.data.data(), blob.data.size())}};
}

}  // namespace

extern "C" {

ULONG EVNTAPI EventRegister(LPCGUID ProviderId, PENABLECALLBACK EnableCallback,
                            PVOID CallbackContext, PREGHANDLE RegHandle) {
  if (ProviderId == nullptr || RegHandle == nullptr) return ERROR_INVALID_PARAMETER;
  *RegHandle = 0;
  auto* registration = new Registration();
  registration->guid = *ProviderId;
  registration->callback = EnableCallback;
  registration->context = CallbackContext;
  const auto token = reinterpret_cast<std::uint64_t>(registration);
  Client& client = Client::instance();
  // Routed before the request goes out, so no notification that follows the reply is lost.
  client.add_registration(registration);
  json request = {{"op", "register"}, {"token", token},
                  {"guid", etwrt::guid_to_wire(*ProviderId)}};
  etwrt::ClientReply reply = client.call(request, kCallLimit, [registration](const json& body) {
    Client::publish_sessions(*registration, body.value("sessions", json::array()));
  });
  ULONG status = reply.status;
  if (status == ERROR_SUCCESS) status = reply.body.value("status", ERROR_NOT_SUPPORTED);
  if (status != ERROR_SUCCESS) {
    client.remove_registration(registration);
    delete registration;
    return status;
  }
  *RegHandle = token;
  // An already enabled provider learns it inside EventRegister, on the calling thread, with
  // SourceId GUID_NULL and no filter data (as Windows does).
  if (reply.body.value("is_enabled", 0u) != 0) {
    Client::invoke(*registration, GUID_NULL, 1, reply.body.value("level", 0u),
                   reply.body.value("any", std::uint64_t{0}),
                   reply.body.value("all", std::uint64_t{0}), nullptr);
  }
  return ERROR_SUCCESS;
}

ULONG EVNTAPI EventUnregister(REGHANDLE RegHandle) {
  Registration* registration = registration_of(RegHandle);
  Client& client = Client::instance();
  // etwrt choice: an unknown handle gets ERROR_INVALID_HANDLE.
  if (RegHandle == 0 || !client.remove_registration(registration)) return ERROR_INVALID_HANDLE;
  client.call({{"op", "unregister"}, {"token", RegHandle}}, kCallLimit);
  registration->table.publish(nullptr, 0);
  delete registration;
  return ERROR_SUCCESS;
}

ULONG EVNTAPI EventSetInformation(REGHANDLE RegHandle, EVENT_INFO_CLASS InformationClass,
                                  PVOID EventInformation, ULONG InformationLength) {
  Registration* registration = registration_of(RegHandle);
  Client& client = Client::instance();
  if (RegHandle == 0 || !client.has_registration(registration)) return ERROR_INVALID_HANDLE;
  switch (InformationClass) {
    case EventProviderBinaryTrackInfo:
      return ERROR_SUCCESS;  // Only matters to Windows' binary tracking; nothing to keep.
    case EventProviderUseDescriptorType:
      return EventInformation != nullptr && InformationLength == sizeof(BOOLEAN)
                 ? ERROR_SUCCESS
                 : ERROR_INVALID_PARAMETER;
    case EventProviderSetTraits:
      break;
    default:
      return ERROR_NOT_SUPPORTED;
  }
  const etwrt::TraitsParseResult parsed = etwrt::parse_traits(EventInformation, InformationLength);
  if (!parsed.ok) return ERROR_INVALID_PARAMETER;
  json request = {{"op", "set_traits"}, {"token", RegHandle}, {"name", parsed.traits.name},
                  {"group", nullptr}};
  if (parsed.traits.group) request["group"] = etwrt::guid_to_wire(*parsed.traits.group);
  etwrt::ClientReply reply = client.call(request, kCallLimit);
  if (reply.status != ERROR_SUCCESS) return reply.status;
  const ULONG status = reply.body.value("status", ERROR_NOT_SUPPORTED);
  if (status == ERROR_SUCCESS) registration->traits = request;
  return status;
}

BOOLEAN EVNTAPI EventEnabled(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor) {
  if (RegHandle == 0 || EventDescriptor == nullptr) return FALSE;
  return registration_of(RegHandle)->table.accepts(EventDescriptor->Level,
                                                   EventDescriptor->Keyword);
}

BOOLEAN EVNTAPI EventProviderEnabled(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword) {
  if (RegHandle == 0) return FALSE;
  return registration_of(RegHandle)->table.accepts(Level, Keyword);
}

ULONG EVNTAPI EventWrite(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                         ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData) {
  if (EventDescriptor == nullptr) return ERROR_INVALID_PARAMETER;
  if (UserDataCount > MAX_EVENT_DATA_DESCRIPTORS || (UserDataCount > 0 && UserData == nullptr)) {
    return ERROR_INVALID_PARAMETER;
  }
  return write_seam(RegHandle, EventDescriptor->Level, EventDescriptor->Keyword);
}

ULONG EVNTAPI EventWriteTransfer(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                                 LPCGUID, LPCGUID, ULONG UserDataCount,
                                 PEVENT_DATA_DESCRIPTOR UserData) {
  return EventWrite(RegHandle, EventDescriptor, UserDataCount, UserData);
}

ULONG EVNTAPI EventWriteEx(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor, ULONG64,
                           ULONG, LPCGUID, LPCGUID, ULONG UserDataCount,
                           PEVENT_DATA_DESCRIPTOR UserData) {
  return EventWrite(RegHandle, EventDescriptor, UserDataCount, UserData);
}

ULONG EVNTAPI EventWriteString(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword,
                               PCWSTR String) {
  if (String == nullptr) return ERROR_INVALID_PARAMETER;
  return write_seam(RegHandle, Level, Keyword);
}

ULONG WMIAPI StartTraceA(PTRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties) {
  const etwrt::StartTraceCheck check = etwrt::check_start_trace(TraceHandle, InstanceName,
                                                                Properties);
  if (check.status != ERROR_SUCCESS) return check.status;
  json request = {{"op", "start"},
                  {"name", InstanceName},
                  {"guid", etwrt::guid_to_wire(Properties->Wnode.Guid)},
                  {"log_file", check.log_file_name},
                  {"buffer_size", Properties->BufferSize},
                  {"minimum_buffers", Properties->MinimumBuffers},
                  {"maximum_buffers", Properties->MaximumBuffers},
                  {"maximum_file_size", Properties->MaximumFileSize},
                  {"log_file_mode", Properties->LogFileMode},
                  {"flush_timer", Properties->FlushTimer},
                  {"enable_flags", Properties->EnableFlags}};
  etwrt::ClientReply reply = Client::instance().call(request, kCallLimit);
  if (reply.status != ERROR_SUCCESS) return reply.status;
  const ULONG status = reply.body.value("status", ERROR_NOT_SUPPORTED);
  if (status != ERROR_SUCCESS) return status;
  fill_properties(Properties, reply.body.at("properties"));
  *TraceHandle = Properties->Wnode.HistoricalContext;
  return ERROR_SUCCESS;
}

ULONG WMIAPI ControlTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode) {
  const ULONG check = etwrt::check_control_trace(TraceHandle, InstanceName, Properties,
                                                 ControlCode);
  if (check != ERROR_SUCCESS) return check;
  json request = {{"op", "control"},
                  {"handle", TraceHandle},
                  {"name", InstanceName != nullptr ? InstanceName : ""},
                  {"code", ControlCode}};
  if (ControlCode == EVENT_TRACE_CONTROL_UPDATE) {
    request["flush_timer"] = Properties->FlushTimer;
    request["maximum_buffers"] = Properties->MaximumBuffers;
    request["enable_flags"] = Properties->EnableFlags;
    request["log_file_mode"] = Properties->LogFileMode;
  }
  etwrt::ClientReply reply = Client::instance().call(request, kCallLimit);
  if (reply.status != ERROR_SUCCESS) return reply.status;
  const ULONG status = reply.body.value("status", ERROR_NOT_SUPPORTED);
  if (status != ERROR_SUCCESS) return status;
  fill_properties(Properties, reply.body.at("properties"));
  return ERROR_SUCCESS;
}

ULONG WMIAPI StopTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                        PEVENT_TRACE_PROPERTIES Properties) {
  return ControlTraceA(TraceHandle, InstanceName, Properties, EVENT_TRACE_CONTROL_STOP);
}

ULONG WMIAPI QueryTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties) {
  return ControlTraceA(TraceHandle, InstanceName, Properties, EVENT_TRACE_CONTROL_QUERY);
}

ULONG WMIAPI FlushTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties) {
  return ControlTraceA(TraceHandle, InstanceName, Properties, EVENT_TRACE_CONTROL_FLUSH);
}

ULONG WMIAPI UpdateTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                          PEVENT_TRACE_PROPERTIES Properties) {
  return ControlTraceA(TraceHandle, InstanceName, Properties, EVENT_TRACE_CONTROL_UPDATE);
}

ULONG WMIAPI EnableTraceEx2(TRACEHANDLE TraceHandle, LPCGUID ProviderId, ULONG ControlCode,
                            UCHAR Level, ULONGLONG MatchAnyKeyword, ULONGLONG MatchAllKeyword,
                            ULONG Timeout, PENABLE_TRACE_PARAMETERS EnableParameters) {
  if (ProviderId == nullptr || TraceHandle == 0) return ERROR_INVALID_PARAMETER;
  if (ControlCode > EVENT_CONTROL_CODE_CAPTURE_STATE) return ERROR_INVALID_PARAMETER;
  json request = {{"op", "enable"},
                  {"handle", TraceHandle},
                  {"guid", etwrt::guid_to_wire(*ProviderId)},
                  {"code", ControlCode},
                  {"level", Level},
                  {"any", MatchAnyKeyword},
                  {"all", MatchAllKeyword},
                  {"wait", Timeout > 0},
                  {"source", nullptr},
                  {"property", 0},
                  {"provider_filter", nullptr},
                  {"system_filters", json::array()}};
  if (EnableParameters != nullptr) {
    if (EnableParameters->Version != ENABLE_TRACE_PARAMETERS_VERSION &&
        EnableParameters->Version != ENABLE_TRACE_PARAMETERS_VERSION_2) {
      return ERROR_INVALID_PARAMETER;
    }
    const etwrt::FilterCheck filters = etwrt::check_filters(EnableParameters->EnableFilterDesc,
                                                            EnableParameters->FilterDescCount);
    if (filters.status != ERROR_SUCCESS) return filters.status;
    // With parameters the SourceId is taken as given, even GUID_NULL.
    request["source"] = etwrt::guid_to_wire(EnableParameters->SourceId);
    request["property"] = EnableParameters->EnableProperty;
    if (filters.filters.provider_bound) {
      request["provider_filter"] = filter_json(*filters.filters.provider_bound);
    }
    for (const etwrt::FilterBlob& blob : filters.filters.system) {
      request["system_filters"].push_back(filter_json(blob));
    }
  }
  const auto limit = Timeout > 0 ? std::chrono::milliseconds(Timeout)
                                 : std::chrono::milliseconds(kCallLimit);
  etwrt::ClientReply reply = Client::instance().call(request, limit);
  if (reply.status != ERROR_SUCCESS) return reply.status;
  return reply.body.value("status", ERROR_NOT_SUPPORTED);
}

ULONG WMIAPI EnableTraceEx(LPCGUID ProviderId, LPCGUID SourceId, TRACEHANDLE TraceHandle,
                           ULONG IsEnabled, UCHAR Level, ULONGLONG MatchAnyKeyword,
                           ULONGLONG MatchAllKeyword, ULONG EnableProperty,
                           PEVENT_FILTER_DESCRIPTOR EnableFilterDesc) {
  ENABLE_TRACE_PARAMETERS parameters{};
  parameters.Version = ENABLE_TRACE_PARAMETERS_VERSION;
  parameters.EnableProperty = EnableProperty;
  parameters.SourceId = SourceId != nullptr ? *SourceId : GUID_NULL;
  parameters.EnableFilterDesc = EnableFilterDesc;
  parameters.FilterDescCount = EnableFilterDesc != nullptr ? 1 : 0;
  // EnableTraceEx does not wait for the callbacks.
  return EnableTraceEx2(TraceHandle, ProviderId, IsEnabled, Level, MatchAnyKeyword,
                        MatchAllKeyword, 0, &parameters);
}

ULONG WMIAPI EnableTrace(ULONG Enable, ULONG EnableFlag, ULONG EnableLevel, LPCGUID ControlGuid,
                         TRACEHANDLE TraceHandle) {
  if (Enable > 1 || EnableLevel > EVENT_MAX_LEVEL) return ERROR_INVALID_PARAMETER;
  // Legacy enable: the flags become MatchAnyKeyword and the provider sees SourceId GUID_NULL.
  ENABLE_TRACE_PARAMETERS parameters{};
  parameters.Version = ENABLE_TRACE_PARAMETERS_VERSION;
  parameters.SourceId = GUID_NULL;
  return EnableTraceEx2(TraceHandle, ControlGuid, Enable, static_cast<UCHAR>(EnableLevel),
                        EnableFlag, 0, 0, &parameters);
}

}  // extern "C"
