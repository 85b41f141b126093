// The Win32 entry points of libetwrt that control sessions and enable providers (StartTrace,
// ControlTrace and its shorthands, EnableTraceEx2 and the older enables, TraceSetInformation):
// argument checks in the calling process, then the broker through the process's Client.
#include "api_shared.h"
#include "client.h"
#include "observe.h"
#include "replies.h"
#include "enable_filters.h"
#include "trace_properties.h"
#include "wire.h"

#include <windows.h>
#include <evntrace.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace {

using json = nlohmann::json;
using etwrt::Client;
using etwrt::kCallLimit;

// The broker writes the file from its own working directory: a relative LogFileName is the
// caller's, so it travels made absolute (as QUERY then returns it).
std::string absolute_log_file(const std::string& name) {
  if (name.empty()) return name;
  std::error_code error;
  const std::filesystem::path path = std::filesystem::absolute(name, error);
  return error ? name : path.string();
}

// A session request whose reply carries the session's properties: on success they are copied
// into the caller's EVENT_TRACE_PROPERTIES, as StartTrace and ControlTrace return them.
ULONG call_for_properties(const json& request, EVENT_TRACE_PROPERTIES* properties,
                          const char* what) {
  const etwrt::ClientReply reply = Client::instance().call(request, kCallLimit);
  const ULONG status = etwrt::reply_status(reply, what);
  if (status != ERROR_SUCCESS) return status;
  etwrt::fill_properties(properties, reply.body.at("properties"));
  return ERROR_SUCCESS;
}

json filter_json(const etwrt::FilterBlob& blob) {
  return {{"type", blob.type}, {"data", etwrt::bytes_to_hex(blob.data.data(), blob.data.size())}};
}

}  // namespace

namespace etwrt {

ULONG control_session(TRACEHANDLE handle, const char* name, EVENT_TRACE_PROPERTIES* properties,
                      ULONG code, SessionNames& names, const std::string& new_log_file) {
  const ULONG check = check_control_trace(handle, name, properties, code);
  if (check != ERROR_SUCCESS) return check;
  // ControlTrace page: "ETW ignores the handle if SessionName is not NULL".
  const bool by_name = name != nullptr && *name != '\0';
  json request = {{"op", "control"},
                  {"handle", by_name ? TRACEHANDLE{0} : handle},
                  {"name", name != nullptr ? name : ""},
                  {"code", code}};
  if (code == EVENT_TRACE_CONTROL_UPDATE) {
    request["flush_timer"] = properties->FlushTimer;
    request["maximum_buffers"] = properties->MaximumBuffers;
    request["enable_flags"] = properties->EnableFlags;
    request["log_file_mode"] = properties->LogFileMode;
    if (!new_log_file.empty()) request["log_file"] = absolute_log_file(new_log_file);
  }
  const ClientReply reply = Client::instance().call(request, kCallLimit);
  const ULONG status = reply_status(reply, "ControlTraceA");
  if (status != ERROR_SUCCESS) return status;
  names = fill_fixed_properties(properties, reply.body.at("properties"));
  return ERROR_SUCCESS;
}

}  // namespace etwrt

extern "C" {

ULONG WMIAPI StartTraceA(PTRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties) {
  return etwrt::guarded("StartTraceA", [&]() -> ULONG {
    if (etwrt::observe::on()) [[unlikely]]
      etwrt::observe::control_call("StartTraceA");
    const etwrt::StartTraceCheck check =
        etwrt::check_start_trace(TraceHandle, InstanceName, Properties);
    if (check.status != ERROR_SUCCESS) return check.status;
    json request = {{"op", "start"},
                    {"name", InstanceName},
                    {"guid", etwrt::guid_to_wire(Properties->Wnode.Guid)},
                    {"log_file", absolute_log_file(check.log_file_name)},
                    {"buffer_size", Properties->BufferSize},
                    {"minimum_buffers", Properties->MinimumBuffers},
                    {"maximum_buffers", Properties->MaximumBuffers},
                    {"maximum_file_size", Properties->MaximumFileSize},
                    {"log_file_mode", Properties->LogFileMode},
                    {"flush_timer", Properties->FlushTimer},
                    {"enable_flags", Properties->EnableFlags},
                    {"client_context", Properties->Wnode.ClientContext}};
    if (const ULONG status = call_for_properties(request, Properties, "StartTraceA");
        status != ERROR_SUCCESS) {
      return status;
    }
    *TraceHandle = Properties->Wnode.HistoricalContext;
    return ERROR_SUCCESS;
  });
}

ULONG WMIAPI ControlTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode) {
  return etwrt::guarded("ControlTraceA", [&]() -> ULONG {
    if (etwrt::observe::on()) [[unlikely]]
      etwrt::observe::control_call("ControlTraceA");
    std::string new_log_file;
    if (ControlCode == EVENT_TRACE_CONTROL_UPDATE && Properties != nullptr &&
        Properties->Wnode.BufferSize >= sizeof(EVENT_TRACE_PROPERTIES) &&
        etwrt::log_file_name_at(Properties, new_log_file) != nullptr) {
      return ERROR_INVALID_PARAMETER;
    }
    etwrt::SessionNames names;
    const ULONG status = etwrt::control_session(TraceHandle, InstanceName, Properties, ControlCode,
                                                names, new_log_file);
    if (status != ERROR_SUCCESS) return status;
    // Each name with its NUL (std::string's c_str() holds one past size()).
    return etwrt::write_control_names(
        Properties, std::string_view(names.logger.c_str(), names.logger.size() + 1),
        std::string_view(names.log_file.c_str(), names.log_file.size() + 1));
  });
}

ETWRT_CONTROL_SHORTHAND(StopTraceA, ControlTraceA, LPCSTR, EVENT_TRACE_CONTROL_STOP)
ETWRT_CONTROL_SHORTHAND(QueryTraceA, ControlTraceA, LPCSTR, EVENT_TRACE_CONTROL_QUERY)
ETWRT_CONTROL_SHORTHAND(FlushTraceA, ControlTraceA, LPCSTR, EVENT_TRACE_CONTROL_FLUSH)
ETWRT_CONTROL_SHORTHAND(UpdateTraceA, ControlTraceA, LPCSTR, EVENT_TRACE_CONTROL_UPDATE)

ULONG WMIAPI EnableTraceEx2(TRACEHANDLE TraceHandle, LPCGUID ProviderId, ULONG ControlCode,
                            UCHAR Level, ULONGLONG MatchAnyKeyword, ULONGLONG MatchAllKeyword,
                            ULONG Timeout, PENABLE_TRACE_PARAMETERS EnableParameters) {
  return etwrt::guarded("EnableTraceEx2", [&]() -> ULONG {
    if (etwrt::observe::on()) [[unlikely]]
      etwrt::observe::control_call("EnableTraceEx2");
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
    const auto limit =
        Timeout > 0 ? std::chrono::milliseconds(Timeout) : std::chrono::milliseconds(kCallLimit);
    return etwrt::reply_status(Client::instance().call(request, limit), "EnableTraceEx2");
  });
}

// TraceSetDisallowList: an array of provider GUIDs (InformationLength a multiple of 16; 0
// clears the list) kept out of the session's group enables (rule GRP-DISALLOW). Other classes
// are not implemented: ERROR_NOT_SUPPORTED.
ULONG WMIAPI TraceSetInformation(TRACEHANDLE SessionHandle, TRACE_INFO_CLASS InformationClass,
                                 PVOID TraceInformation, ULONG InformationLength) {
  return etwrt::guarded("TraceSetInformation", [&]() -> ULONG {
    if (SessionHandle == 0) return ERROR_INVALID_HANDLE;
    if (InformationClass != TraceSetDisallowList) return ERROR_NOT_SUPPORTED;
    if (InformationLength % sizeof(GUID) != 0 ||
        (InformationLength > 0 && TraceInformation == nullptr)) {
      return ERROR_INVALID_PARAMETER;
    }
    json guids = json::array();
    for (ULONG at = 0; at < InformationLength; at += sizeof(GUID)) {
      GUID g;
      std::memcpy(&g, static_cast<const char*>(TraceInformation) + at, sizeof g);
      guids.push_back(etwrt::guid_to_wire(g));
    }
    return etwrt::reply_status(
        Client::instance().call({{"op", "disallow"}, {"handle", SessionHandle}, {"guids", guids}},
                                kCallLimit),
        "TraceSetInformation");
  });
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
  return EnableTraceEx2(TraceHandle, ProviderId, IsEnabled, Level, MatchAnyKeyword, MatchAllKeyword,
                        0, &parameters);
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
