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
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto kCallLimit = 30s;

}  // namespace

namespace etwrt {

// Every entry is read whole and every name encoded before the caller's buffers are written: a
// reply that lacks a field, or a name that does not convert (ERROR_INVALID_DATA), changes
// nothing.
ULONG query_all_traces(EVENT_TRACE_PROPERTIES* const* array, ULONG count, ULONG* logger_count,
                       NameEncoder encode) {
  if (const ULONG status = check_query_all_traces(array, count, logger_count);
      status != ERROR_SUCCESS) {
    return status;
  }
  // The page: it returns "the trace sessions that the caller has permissions to query"; a
  // caller without the right may query none here (etwrt choice: no session grants it).
  if (control_denied()) {
    *logger_count = 0;
    return ERROR_SUCCESS;
  }
  const ClientReply reply = Client::instance().call({{"op", "enumerate"}}, kCallLimit);
  if (const ULONG status = reply_status(reply, "QueryAllTraces"); status != ERROR_SUCCESS) {
    return status;
  }
  const json& sessions = reply.body.at("sessions");
  if (!sessions.is_array()) throw std::runtime_error("the broker's session list is no array");
  const std::size_t filled = std::min<std::size_t>(count, sessions.size());
  std::vector<EVENT_TRACE_PROPERTIES> fixed(filled);
  std::vector<std::string> names(2 * filled);  // logger, log file; each encoded
  for (std::size_t i = 0; i < filled; ++i) {
    fixed[i] = *array[i];
    const SessionNames plain = fill_fixed_properties(&fixed[i], sessions[i]);
    if (!encode(plain.logger, names[2 * i]) || !encode(plain.log_file, names[2 * i + 1])) {
      return ERROR_INVALID_DATA;
    }
  }
  // Each structure as ControlTrace(QUERY) fills it: the fixed part, then the session name and
  // the log file name (empty when none) where write_control_names puts them. A name without
  // room is left out, with no error (etwrt choice: the page names no per-structure status).
  for (std::size_t i = 0; i < filled; ++i) {
    *array[i] = fixed[i];
    write_control_names(array[i], names[2 * i], names[2 * i + 1]);
  }
  // ERROR_MORE_DATA: "SessionCount is greater than PropertyArrayCount"; the array is filled
  // and the count says how many there are.
  const auto total = static_cast<ULONG>(sessions.size());
  *logger_count = total;
  return total > count ? ERROR_MORE_DATA : ERROR_SUCCESS;
}

}  // namespace etwrt

extern "C" {

ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount) {
  return etwrt::guarded("QueryAllTracesA", [&]() -> ULONG {
    // The names as they are, UTF-8 with their NUL.
    const auto narrow = [](const std::string& name, std::string& bytes) {
      bytes.assign(name.c_str(), name.size() + 1);
      return true;
    };
    return etwrt::query_all_traces(PropertyArray, PropertyArrayCount, LoggerCount, narrow);
  });
}

}  // extern "C"
