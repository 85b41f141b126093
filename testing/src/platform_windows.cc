// Windows: real ETW. Before the first capture, whether this process can start a realtime
// session at all: an administrator or a member of Performance Log Users may; Wine's ETW starts
// none. Then the sweep of the sessions tests that crashed left running (named etwh-<pid>-...,
// their process gone: ETW sessions outlive their controller).
#include "platform_home.h"

#include "harness/environment/stale_sessions.h"

#include <windows.h>
#include <evntrace.h>

#include <sstream>
#include <vector>

namespace etwh::testing {
namespace {

// StartTrace's status for a realtime session named `name`, stopped again at once.
ULONG probe_session(const std::string& name) {
  std::vector<unsigned char> bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
  p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p->Wnode.ClientContext = 1;
  p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  TRACEHANDLE handle = 0;
  const ULONG status = StartTraceA(&handle, name.c_str(), p);
  if (status == ERROR_SUCCESS) ControlTraceA(handle, nullptr, p, EVENT_TRACE_CONTROL_STOP);
  return status;
}

}  // namespace

std::optional<std::string> prepare_platform() {
  static const std::optional<std::string> answer = []() -> std::optional<std::string> {
    std::ostringstream log;
    (void)stop_stale_sessions(GetCurrentProcessId(), log);
    const ULONG status = probe_session(session_prefix() + "probe");
    if (status == ERROR_ACCESS_DENIED) {
      return std::string(
          "this process may not control ETW sessions: run it elevated, or as a member of "
          "Performance Log Users (StartTrace: ERROR_ACCESS_DENIED)");
    }
    if (status != ERROR_SUCCESS) {
      return "this machine's ETW starts no realtime session (StartTrace: " +
             std::to_string(status) + "; Wine's ETW, for one, implements none)";
    }
    return std::nullopt;
  }();
  return answer;
}

std::string session_prefix() { return "etwh-" + std::to_string(GetCurrentProcessId()) + "-"; }

std::string private_home() { return {}; }

}  // namespace etwh::testing
