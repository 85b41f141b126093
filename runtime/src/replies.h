// libetwrt: what the broker answers, turned into Win32 results in one place (krabsetw's
// errors.hpp idea): a reply's status, the values a reply carries, and the status an entry point
// returns when something inside it failed. Every entry point goes through these, so no
// exception reaches the program that called the API.
#pragma once

#include "client.h"

#include <windows.h>
#include <evntrace.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace etwrt {

// Internal status of a reply whose reader-thread handling (`on_reply`) found it malformed.
inline constexpr ULONG kBadReply = 0xE7000002u;

// The Win32 status of a broker reply: the call's own failure if it had one, else the reply's
// "status". A reply etwrt cannot read (no numeric status, or kBadReply) is ERROR_INVALID_DATA,
// logged with `what` (the entry point).
//   if (const ULONG status = reply_status(reply, "StartTraceA"); status != ERROR_SUCCESS) ...
ULONG reply_status(const ClientReply& reply, const char* what);

// The status an entry point returns for an exception that escaped its body, logged on stderr
// as etwrt logs (`etwrt: <entry>: ...`): out of memory ERROR_NOT_ENOUGH_MEMORY, no thread or
// lock ERROR_NO_SYSTEM_RESOURCES, anything else (a reply not as expected) ERROR_INVALID_DATA.
// Call only inside a catch block.
ULONG fault_status(const char* entry) noexcept;

// Runs an entry point's body: no exception crosses into the caller of the Win32 API.
//   return guarded("EventUnregister", [&] { return unregister_provider(handle); });
template <class Body>
ULONG guarded(const char* entry, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return fault_status(entry);
  }
}

// Copies a session's "properties" (of a start or control reply) into the caller's
// EVENT_TRACE_PROPERTIES and its logger name. Everything is read before anything is written:
// a reply without a field throws nlohmann's exception and leaves `out` as it was.
void fill_properties(EVENT_TRACE_PROPERTIES* out, const nlohmann::json& properties);

// A session's names as a control reply gives them (UTF-8; `log_file` empty when it has none).
struct SessionNames {
  std::string logger;
  std::string log_file;
};

// fill_properties without the names: the fixed part only, and the names it carries.
SessionNames fill_fixed_properties(EVENT_TRACE_PROPERTIES* out, const nlohmann::json& properties);

// ControlTraceA's work up to the names (argument checks, the broker's control, the fixed part
// of Properties filled): ControlTraceA and ControlTraceW then write the names, each in its own
// encoding (write_control_names). On ERROR_SUCCESS `names` holds them. `new_log_file`: UPDATE's
// log file to switch to, in UTF-8 (each form reads it in its own encoding), or empty.
ULONG control_session(TRACEHANDLE handle, const char* name, EVENT_TRACE_PROPERTIES* properties,
                      ULONG code, SessionNames& names, const std::string& new_log_file = {});

// How QueryAllTraces' A or W form writes a session name: its bytes in that form's encoding,
// terminating NUL included, in `bytes`; false when the name does not convert.
using NameEncoder = bool (*)(const std::string& name, std::string& bytes);

// QueryAllTraces for the A and W calls: the argument checks (check_query_all_traces), then the
// running sessions but private ones, in the order they started, each structure as
// ControlTrace(QUERY) fills it (the caller's own BufferSize and offsets kept, the names encoded
// by `encode`). The first min(count, sessions) structures are written; *logger_count says how
// many there are (0, with ERROR_SUCCESS, for a caller without the right to control sessions).
// Every name converts, or nothing is written (ERROR_INVALID_DATA).
ULONG query_all_traces(EVENT_TRACE_PROPERTIES* const* array, ULONG count, ULONG* logger_count,
                       NameEncoder encode);

// What a register reply says of a provider some session enables already.
struct PreEnabled {
  bool enabled = false;
  UCHAR level = 0;
  std::uint64_t any = 0;
  std::uint64_t all = 0;
  GUID source = GUID_NULL;  // Windows gives GUID_NULL; a mutant may keep the session's.
};

// Reads it from a register reply; throws nlohmann's type_error on a mistyped field.
PreEnabled read_pre_enabled(const nlohmann::json& reply);

}  // namespace etwrt
