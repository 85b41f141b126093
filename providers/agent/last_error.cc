#include "last_error.h"

#include "win32_text.h"

#include <windows.h>
#include <evntrace.h>
#include <wmistr.h>

#include <cstdint>

namespace etwh::agent {

using nlohmann::json;

namespace {

// No session's handle: the logger ID (the low 16 bits) 0xFFFF is above every real one, on
// Windows (at most 64 loggers) and on etwrt.
constexpr TRACEHANDLE kNoSession = 0xFFFF;

}  // namespace

json call_and_read_last_error(const std::string& api) {
  bool failed = false;
  std::uint64_t returned = 0;
  DWORD error = 0;
  SetLastError(ERROR_SUCCESS);
  if (api == "OpenTrace") {
    const TRACEHANDLE h = OpenTraceA(nullptr);
    error = GetLastError();
    failed = h == INVALID_PROCESSTRACE_HANDLE;
    returned = h;
  } else if (api == "GetTraceLoggerHandle") {
    WNODE_HEADER wnode{};
    wnode.BufferSize = sizeof wnode;
    wnode.HistoricalContext = kNoSession;
    const TRACEHANDLE h = GetTraceLoggerHandle(&wnode);
    error = GetLastError();
    failed = h == static_cast<TRACEHANDLE>(reinterpret_cast<std::uintptr_t>(INVALID_HANDLE_VALUE));
    returned = h;
  } else if (api == "GetTraceEnableLevel") {
    const UCHAR level = GetTraceEnableLevel(kNoSession);
    error = GetLastError();
    failed = level == 0;
    returned = level;
  } else if (api == "GetTraceEnableFlags") {
    const ULONG flags = GetTraceEnableFlags(kNoSession);
    error = GetLastError();
    failed = flags == 0;
    returned = flags;
  } else {
    return json::object();
  }
  return {{"status", error}, {"failed", failed}, {"returned", format_hex(returned)}};
}

}  // namespace etwh::agent
