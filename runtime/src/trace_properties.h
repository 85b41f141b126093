// etwrt: argument validation of StartTraceA and ControlTraceA, done in the calling process
// before anything reaches the broker (pure functions, no I/O), and the layout helpers that
// read and write the names inside an EVENT_TRACE_PROPERTIES buffer.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <string>
#include <string_view>

namespace etwrt {

// Longest session name etwrt accepts, in bytes without the NUL (observed: Windows' limit on
// logger names is 1024 characters).
inline constexpr std::size_t kMaxSessionNameBytes = 1024;

// Wnode.ClientContext, the session's clock (WNODE_HEADER page): 0 (the default) and 1 QPC,
// 2 system time, 3 CPU cycle counter. etwrt's QPC ticks at kQpcFrequency (CLOCK_MONOTONIC in
// 100 ns units), its cycle counter at kCpuSpeedMHz (CLOCK_MONOTONIC in ns).
inline constexpr ULONG kClockQpc = 1;
inline constexpr ULONG kClockSystemTime = 2;
inline constexpr ULONG kClockCpuCycles = 3;
inline constexpr LONGLONG kQpcFrequency = 10'000'000;
inline constexpr ULONG kCpuSpeedMHz = 1000;

struct StartTraceCheck {
  ULONG status = ERROR_SUCCESS;
  std::string reason;         // For diagnostics when status != ERROR_SUCCESS.
  std::string log_file_name;  // Empty when the session has no log file.
};

// Validates StartTraceA's arguments as Windows does, in this order:
// NULL TraceHandle, InstanceName or Properties, or an empty name -> ERROR_INVALID_PARAMETER;
// Wnode.BufferSize < sizeof(EVENT_TRACE_PROPERTIES) -> ERROR_BAD_LENGTH;
// LoggerNameOffset or LogFileNameOffset inside the fixed part or past BufferSize, or a log
// file name not NUL-terminated inside the buffer -> ERROR_INVALID_PARAMETER;
// a name longer than kMaxSessionNameBytes or not fitting at LoggerNameOffset -> ERROR_BAD_LENGTH;
// Wnode.Guid SystemTraceControlGuid with another name than KERNEL_LOGGER_NAME ->
// ERROR_INVALID_PARAMETER;
// Wnode.ClientContext above 3 -> ERROR_INVALID_PARAMETER (etwrt choice: the page lists 1..3);
// contradictory file modes -> ERROR_INVALID_PARAMETER;
// neither a log file nor EVENT_TRACE_REAL_TIME_MODE / EVENT_TRACE_BUFFERING_MODE ->
// ERROR_BAD_PATHNAME.
StartTraceCheck check_start_trace(const TRACEHANDLE* handle, const char* instance_name,
                                  const EVENT_TRACE_PROPERTIES* properties);

// Validates ControlTraceA's arguments: NULL Properties -> ERROR_INVALID_PARAMETER; short
// Wnode.BufferSize -> ERROR_BAD_LENGTH; handle 0 and no name -> ERROR_INVALID_PARAMETER;
// an unknown control code -> ERROR_INVALID_PARAMETER.
ULONG check_control_trace(TRACEHANDLE handle, const char* instance_name,
                          const EVENT_TRACE_PROPERTIES* properties, ULONG control_code);

// The log file name at LogFileNameOffset, for StartTrace and for ControlTrace(UPDATE)'s switch
// (the ControlTrace page: "Set this member if you want to switch to another log file. If this
// member is 0, the file name is not updated"): empty when the offset is 0 (for UPDATE an empty
// name changes nothing either: etwrt choice, a buffer QUERY filled for a session without a
// file, passed back). nullptr, or why the offset is not valid (ERROR_INVALID_PARAMETER): not
// inside the buffer past the fixed part, or the name not NUL-terminated inside it.
const char* log_file_name_at(const EVENT_TRACE_PROPERTIES* properties, std::string& name);

// Whether a NEWFILE session's file name is a pattern with exactly one %d (Logging Mode
// Constants page), at StartTrace and at an UPDATE's switch.
bool newfile_pattern(const std::string& name);

// The most sessions etwrt can be set to run at once (ETWRT_MAX_SESSIONS of the broker); also
// the largest PropertyArrayCount QueryAllTraces takes.
inline constexpr ULONG kMostSessions = 65536;

// Validates QueryAllTraces' arguments: PropertyArray or LoggerCount NULL, PropertyArrayCount 0
// or above kMostSessions, or a NULL structure among the first PropertyArrayCount ->
// ERROR_INVALID_PARAMETER; a structure whose Wnode.BufferSize is below the fixed part ->
// ERROR_BAD_LENGTH.
ULONG check_query_all_traces(EVENT_TRACE_PROPERTIES* const* array, ULONG count,
                             const ULONG* logger_count);

// Copies `name` (with its NUL) to LoggerNameOffset when the offset lies past the fixed part
// and the name fits in Wnode.BufferSize; returns whether it was written.
bool write_logger_name(EVENT_TRACE_PROPERTIES* properties, const std::string& name);

// The names ControlTrace returns after its work is done (every code): ERROR_SUCCESS, or
// ERROR_MORE_DATA when Properties has no room for them (the page: "too small to hold all the
// information for the session ... ETW will have already stopped the session"). `logger` and
// `log_file` are the names encoded as the caller reads them, each with its terminating NUL (one
// byte for the A call, two for W); `log_file` is only the NUL when the session has none.
// Room (etwrt's reading; the pages do not define it): the session name goes to LoggerNameOffset
// (0: right after the fixed part) and its room ends at LogFileNameOffset when that lies past it,
// else at Wnode.BufferSize; then the log file name goes to LogFileNameOffset (0: right after
// the session name) and its room ends at LoggerNameOffset when that lies past it, else at
// Wnode.BufferSize. An offset inside the fixed part has no room. Each name written has its
// offset written back; a name without room stops there (what was written stays).
//   Wnode.BufferSize = fixed + 8, both offsets 0: "abc\0" fits, then "\0" fits -> SUCCESS
//   Wnode.BufferSize = fixed, both offsets 0: nothing fits -> ERROR_MORE_DATA
ULONG write_control_names(EVENT_TRACE_PROPERTIES* properties, std::string_view logger,
                          std::string_view log_file);

}  // namespace etwrt

// StopTrace, QueryTrace, FlushTrace and UpdateTrace are ControlTrace with a fixed code (their
// pages): this one forwarding defines all eight, the A entry points over ControlTraceA
// (api.cc) and the W ones over ControlTraceW (api_wide.cc).
#define ETWRT_CONTROL_SHORTHAND(name, control, name_type, code)      \
  ULONG WMIAPI name(TRACEHANDLE TraceHandle, name_type InstanceName, \
                    PEVENT_TRACE_PROPERTIES Properties) {            \
    return control(TraceHandle, InstanceName, Properties, code);     \
  }
