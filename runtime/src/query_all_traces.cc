// QueryAllTracesA: the properties and statistics of every running session the caller may
// query (not private ones), as ControlTrace(QUERY) gives them for one. The W form is in
// api_wide.cc.
#include "access_mode.h"
#include "client.h"
#include "replies.h"
#include "trace_properties.h"

#include <windows.h>
#include <evntrace.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;

}  // namespace

extern "C" {

ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount) {
  return etwrt::guarded("QueryAllTracesA", [&]() -> ULONG {
    if (const ULONG status =
            etwrt::check_query_all_traces(PropertyArray, PropertyArrayCount, LoggerCount);
        status != ERROR_SUCCESS) {
      return status;
    }
    // The page: it returns "the trace sessions that the caller has permissions to query"; a
    // caller without the right may query none here (etwrt choice: no session grants it).
    if (etwrt::control_denied()) {
      *LoggerCount = 0;
      return ERROR_SUCCESS;
    }
    const etwrt::ClientReply reply =
        etwrt::Client::instance().call({{"op", "enumerate"}}, kCallLimit);
    if (const ULONG status = etwrt::reply_status(reply, "QueryAllTracesA");
        status != ERROR_SUCCESS) {
      return status;
    }
    const json& sessions = reply.body.at("sessions");
    if (!sessions.is_array()) throw std::runtime_error("the broker's session list is no array");
    const std::size_t filled = std::min<std::size_t>(PropertyArrayCount, sessions.size());
    // Every entry is read once without writing the caller's buffers: a reply that lacks a
    // field (ERROR_INVALID_DATA) changes nothing.
    for (std::size_t i = 0; i < filled; ++i) {
      EVENT_TRACE_PROPERTIES scratch = *PropertyArray[i];
      scratch.LoggerNameOffset = 0;  // No name written into the scratch copy.
      etwrt::fill_properties(&scratch, sessions[i]);
    }
    for (std::size_t i = 0; i < filled; ++i) etwrt::fill_properties(PropertyArray[i], sessions[i]);
    // ERROR_MORE_DATA: "SessionCount is greater than PropertyArrayCount"; the array is filled
    // and the count says how many there are.
    *LoggerCount = static_cast<ULONG>(sessions.size());
    return sessions.size() > PropertyArrayCount ? ERROR_MORE_DATA : ERROR_SUCCESS;
  });
}

}  // extern "C"
