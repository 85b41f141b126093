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
#include <string_view>
#include <vector>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;

}  // namespace

namespace etwrt {

ULONG query_all_sessions(EVENT_TRACE_PROPERTIES* const* array, ULONG count,
                         const ULONG* logger_count, std::vector<QueriedSession>& out,
                         ULONG& total) {
  out.clear();
  total = 0;
  if (const ULONG status = check_query_all_traces(array, count, logger_count);
      status != ERROR_SUCCESS) {
    return status;
  }
  // The page: it returns "the trace sessions that the caller has permissions to query"; a
  // caller without the right may query none here (etwrt choice: no session grants it).
  if (control_denied()) return ERROR_SUCCESS;
  const ClientReply reply = Client::instance().call({{"op", "enumerate"}}, kCallLimit);
  if (const ULONG status = reply_status(reply, "QueryAllTraces"); status != ERROR_SUCCESS) {
    return status;
  }
  const json& sessions = reply.body.at("sessions");
  if (!sessions.is_array()) throw std::runtime_error("the broker's session list is no array");
  const std::size_t filled = std::min<std::size_t>(count, sessions.size());
  // Every entry is read whole before the caller's buffers are written: a reply that lacks a
  // field (ERROR_INVALID_DATA) changes nothing.
  for (std::size_t i = 0; i < filled; ++i) {
    QueriedSession s{*array[i], {}};
    s.names = fill_fixed_properties(&s.fixed, sessions[i]);
    out.push_back(std::move(s));
  }
  total = static_cast<ULONG>(sessions.size());
  return ERROR_SUCCESS;
}

}  // namespace etwrt

extern "C" {

// Each structure as ControlTrace(QUERY) fills it: the fixed part, then the session name and
// the log file name (empty when none) where write_control_names puts them. A name without
// room is left out, with no error (etwrt choice: the page names no per-structure status).
ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount) {
  return etwrt::guarded("QueryAllTracesA", [&]() -> ULONG {
    std::vector<etwrt::QueriedSession> sessions;
    ULONG total = 0;
    if (const ULONG status = etwrt::query_all_sessions(PropertyArray, PropertyArrayCount,
                                                       LoggerCount, sessions, total);
        status != ERROR_SUCCESS) {
      return status;
    }
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      const etwrt::SessionNames& names = sessions[i].names;
      *PropertyArray[i] = sessions[i].fixed;
      etwrt::write_control_names(
          PropertyArray[i], std::string_view(names.logger.c_str(), names.logger.size() + 1),
          std::string_view(names.log_file.c_str(), names.log_file.size() + 1));
    }
    // ERROR_MORE_DATA: "SessionCount is greater than PropertyArrayCount"; the array is filled
    // and the count says how many there are.
    *LoggerCount = total;
    return total > PropertyArrayCount ? ERROR_MORE_DATA : ERROR_SUCCESS;
  });
}

}  // extern "C"
