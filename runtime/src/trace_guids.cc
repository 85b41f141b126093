// EnumerateTraceGuidsEx: which providers are registered (TraceGuidQueryList; in this process,
// TraceGuidQueryProcess) and, for one
// GUID, each registration with the sessions that enable it (TraceGuidQueryInfo), from the
// broker's op "providers". Tools use it to read another session's configuration.
#include "client.h"
#include "replies.h"
#include "wire.h"

#include <windows.h>
#include <evntrace.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;

// Appends a structure's bytes.
template <typename T>
void append(std::vector<unsigned char>& out, const T& value) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

// TraceGuidQueryList's answer: the GUIDs, one after another.
std::vector<unsigned char> guid_list(const json& reply) {
  std::vector<unsigned char> out;
  for (const json& text : reply.at("guids")) {
    GUID g;
    if (!etwrt::guid_from_wire(text.get<std::string>(), g)) {
      throw std::runtime_error("the broker's provider list holds a bad GUID");
    }
    append(out, g);
  }
  return out;
}

// TraceGuidQueryInfo's answer: TRACE_GUID_INFO, then each instance's
// TRACE_PROVIDER_INSTANCE_INFO followed by its TRACE_ENABLE_INFOs.
std::vector<unsigned char> guid_info(const json& reply) {
  const json& instances = reply.at("instances");
  std::vector<unsigned char> out;
  TRACE_GUID_INFO head{};
  head.InstanceCount = static_cast<ULONG>(instances.size());
  append(out, head);
  for (const json& instance : instances) {
    const json& enables = instance.at("enables");
    TRACE_PROVIDER_INSTANCE_INFO info{};
    info.EnableCount = static_cast<ULONG>(enables.size());
    info.NextOffset = static_cast<ULONG>(sizeof info + enables.size() * sizeof(TRACE_ENABLE_INFO));
    info.Pid = instance.at("pid").get<ULONG>();
    if (instance.at("legacy").get<bool>()) info.Flags |= TRACE_PROVIDER_FLAG_LEGACY;
    if (instance.at("pre_enable").get<bool>()) info.Flags |= TRACE_PROVIDER_FLAG_PRE_ENABLE;
    append(out, info);
    for (const json& e : enables) {
      TRACE_ENABLE_INFO enable{};
      enable.IsEnabled = 1;
      enable.Level = e.at("level").get<UCHAR>();
      // The session's logger id: the low 16 bits of its handle, as Windows' TRACEHANDLEs carry
      // theirs (etwrt's handles are small numbers).
      enable.LoggerId = static_cast<USHORT>(e.at("logger").get<std::uint64_t>() & 0xFFFF);
      enable.EnableProperty = e.at("property").get<ULONG>();
      enable.MatchAnyKeyword = e.at("any").get<std::uint64_t>();
      enable.MatchAllKeyword = e.at("all").get<std::uint64_t>();
      append(out, enable);
    }
  }
  return out;
}

// The broker's session_info for `handle`: the session limit, and the session's disallow list.
json session_info(TRACEHANDLE handle, ULONG& status, const char* what) {
  const etwrt::ClientReply reply =
      etwrt::Client::instance().call({{"op", "session_info"}, {"handle", handle}}, kCallLimit);
  status = etwrt::reply_status(reply, what);
  return reply.body;
}

// The session limit as a ULONG (TraceMaxLoggersQuery).
std::vector<unsigned char> max_loggers(const json& info) {
  std::vector<unsigned char> out;
  append(out, info.at("max_sessions").get<ULONG>());
  return out;
}

// Copies `answer` out as both functions' pages say: the size needed in *ReturnLength (when
// given), `too_small` when it does not fit.
ULONG hand_out(const std::vector<unsigned char>& answer, PVOID out, ULONG out_size,
               PULONG return_length, ULONG too_small) {
  if (return_length != nullptr) *return_length = static_cast<ULONG>(answer.size());
  if (answer.size() > out_size) return too_small;
  if (!answer.empty()) std::memcpy(out, answer.data(), answer.size());
  return ERROR_SUCCESS;
}

}  // namespace

extern "C" {

// The page: ERROR_INVALID_PARAMETER "One of the parameters is not valid";
// ERROR_INSUFFICIENT_BUFFER when OutBuffer is too small, ReturnLength then "receives the
// required buffer size". etwrt choices: ReturnLength NULL, a TraceGuidQueryInfo without a
// whole GUID in InBuffer, or OutBuffer NULL with a size: ERROR_INVALID_PARAMETER; a GUID no
// process registered and no session enables: ERROR_WMI_GUID_NOT_FOUND; the other classes
// (the provider groups', TraceMaxLoggersQuery...): ERROR_NOT_SUPPORTED.
ULONG WMIAPI EnumerateTraceGuidsEx(TRACE_QUERY_INFO_CLASS TraceQueryInfoClass, PVOID InBuffer,
                                   ULONG InBufferSize, PVOID OutBuffer, ULONG OutBufferSize,
                                   PULONG ReturnLength) {
  return etwrt::guarded("EnumerateTraceGuidsEx", [&]() -> ULONG {
    if (ReturnLength == nullptr || (OutBuffer == nullptr && OutBufferSize != 0)) {
      return ERROR_INVALID_PARAMETER;
    }
    json request = {{"op", "providers"}};
    if (TraceQueryInfoClass == TraceGuidQueryInfo) {
      if (InBuffer == nullptr || InBufferSize < sizeof(GUID)) return ERROR_INVALID_PARAMETER;
      GUID g;
      std::memcpy(&g, InBuffer, sizeof g);
      request["guid"] = etwrt::guid_to_wire(g);
    } else if (TraceQueryInfoClass == TraceGuidQueryProcess) {
      request["process"] = true;
    } else if (TraceQueryInfoClass == TraceMaxLoggersQuery) {
      ULONG status = ERROR_SUCCESS;
      const json info = session_info(0, status, "EnumerateTraceGuidsEx");
      if (status != ERROR_SUCCESS && status != ERROR_WMI_INSTANCE_NOT_FOUND) return status;
      return hand_out(max_loggers(info), OutBuffer, OutBufferSize, ReturnLength,
                      ERROR_INSUFFICIENT_BUFFER);
    } else if (TraceQueryInfoClass != TraceGuidQueryList) {
      return ERROR_NOT_SUPPORTED;
    }
    const etwrt::ClientReply reply = etwrt::Client::instance().call(request, kCallLimit);
    if (const ULONG status = etwrt::reply_status(reply, "EnumerateTraceGuidsEx");
        status != ERROR_SUCCESS) {
      return status;
    }
    const std::vector<unsigned char> answer =
        TraceQueryInfoClass == TraceGuidQueryInfo ? guid_info(reply.body) : guid_list(reply.body);
    return hand_out(answer, OutBuffer, OutBufferSize, ReturnLength, ERROR_INSUFFICIENT_BUFFER);
  });
}

// The TRACE_QUERY_INFO_CLASS classes a user-mode session has here: TraceDisallowListQuery (the
// GUIDs TraceSetDisallowList set) and TraceMaxLoggersQuery (the session limit, a ULONG). The
// kernel's (stack tracing, system enable flags, profiling sources, PMC and LBR counters...) and
// the others: ERROR_NOT_SUPPORTED, the page's "The request is not supported". A buffer too
// small: ERROR_BAD_LENGTH with the size needed in *ReturnLength (the page: InformationLength
// "less than a minimum size"). etwrt choices: SessionHandle 0 ERROR_INVALID_HANDLE (as
// TraceSetInformation); a handle of no session ERROR_WMI_INSTANCE_NOT_FOUND.
ULONG WMIAPI TraceQueryInformation(TRACEHANDLE SessionHandle, TRACE_INFO_CLASS InformationClass,
                                   PVOID TraceInformation, ULONG InformationLength,
                                   PULONG ReturnLength) {
  return etwrt::guarded("TraceQueryInformation", [&]() -> ULONG {
    // Any integer may come: read it as one, never as the enum.
    std::underlying_type_t<TRACE_INFO_CLASS> raw_class = 0;
    static_assert(sizeof raw_class == sizeof InformationClass);
    std::memcpy(&raw_class, &InformationClass, sizeof raw_class);
    if (raw_class != TraceDisallowListQuery && raw_class != TraceMaxLoggersQuery) {
      return ERROR_NOT_SUPPORTED;
    }
    if (SessionHandle == 0) return ERROR_INVALID_HANDLE;
    if (TraceInformation == nullptr && InformationLength != 0) return ERROR_INVALID_PARAMETER;
    ULONG status = ERROR_SUCCESS;
    const json info = session_info(SessionHandle, status, "TraceQueryInformation");
    if (status != ERROR_SUCCESS) return status;
    std::vector<unsigned char> answer;
    if (raw_class == TraceMaxLoggersQuery) {
      answer = max_loggers(info);
    } else {
      const json list = {{"guids", info.at("disallow")}};
      answer = guid_list(list);
    }
    return hand_out(answer, TraceInformation, InformationLength, ReturnLength, ERROR_BAD_LENGTH);
  });
}

}  // extern "C"
