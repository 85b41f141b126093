// Whether this process can capture at all (both platforms): start a realtime session (on
// Windows an administrator or a member of Performance Log Users may; etwrt answers as Windows
// does, ETWRT_DENY_CONTROL playing the caller without the right) and open a consumer on it
// (Wine 8.0's ETW starts the session but opens no realtime consumer).
#include "platform_home.h"

#include <windows.h>
#include <evntrace.h>

#include <string>
#include <vector>

namespace etwh::testing {
namespace {

// What stands between this process and a realtime capture: StartTrace's status for a realtime
// session named `name`, then whether a consumer can open it (OpenTrace); the session is stopped
// again at once.
struct Probe {
  ULONG start_status = ERROR_SUCCESS;
  bool consumer_opened = false;
  ULONG open_error = ERROR_SUCCESS;  // GetLastError after OpenTrace failed
};

void WINAPI ignore_record(PEVENT_RECORD) {}

Probe probe_session(const std::string& name) {
  Probe probe;
  std::vector<unsigned char> bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
  p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p->Wnode.ClientContext = 1;
  p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  TRACEHANDLE handle = 0;
  probe.start_status = StartTraceA(&handle, name.c_str(), p);
  if (probe.start_status != ERROR_SUCCESS) return probe;
  std::string logger = name;
  EVENT_TRACE_LOGFILEA logfile{};
  logfile.LoggerName = logger.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = &ignore_record;
  const TRACEHANDLE trace = OpenTraceA(&logfile);
  probe.consumer_opened = trace != INVALID_PROCESSTRACE_HANDLE;
  if (probe.consumer_opened) {
    CloseTrace(trace);
  } else {
    probe.open_error = GetLastError();
  }
  ControlTraceA(handle, nullptr, p, EVENT_TRACE_CONTROL_STOP);
  return probe;
}

}  // namespace

std::optional<std::string> capture_refusal() {
  static const std::optional<std::string> answer = []() -> std::optional<std::string> {
    const Probe probe = probe_session(session_prefix() + "probe");
    if (probe.start_status == ERROR_ACCESS_DENIED) {
      return std::string(
          "this process may not control ETW sessions: run it elevated, or as a member of "
          "Performance Log Users (StartTrace: ERROR_ACCESS_DENIED)");
    }
    if (probe.start_status != ERROR_SUCCESS) {
      return "this machine's ETW starts no realtime session (StartTrace: " +
             std::to_string(probe.start_status) + ")";
    }
    if (!probe.consumer_opened) {
      return "this machine's ETW opens no realtime consumer: StartTrace started a realtime "
             "session but OpenTrace failed on it (GetLastError " +
             std::to_string(probe.open_error) +
             "); Wine 8.0's StartTrace, for one, succeeds while its OpenTrace is a stub that "
             "fails with ERROR_ACCESS_DENIED (5)";
    }
    return std::nullopt;
  }();
  return answer;
}

}  // namespace etwh::testing
