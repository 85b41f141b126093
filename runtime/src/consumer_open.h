// etwrt: OpenTrace's work, shared by OpenTraceA (consumer.cc) and OpenTraceW (api_wide.cc).
#pragma once

#include <windows.h>
#include <evntrace.h>

namespace etwrt {

// Opens the realtime session `logfile->LoggerName` (UTF-8) for consuming: etwrt keeps its own
// copy of the record (callbacks, Context, mode, the name) and fills the caller's LogfileHeader
// and BufferSize when the session runs. A session not running yet still gets a handle
// (ProcessTrace attaches then). `wide_name`: OpenTraceW's LoggerName, which the copy handed
// to BufferCallback points to instead; NULL for OpenTraceA. On failure, the thread's last
// error and INVALID_PROCESSTRACE_HANDLE.
TRACEHANDLE open_trace(PEVENT_TRACE_LOGFILEA logfile, const char16_t* wide_name);

// SetLastError(status), then INVALID_PROCESSTRACE_HANDLE.
TRACEHANDLE fail_open(ULONG status);

}  // namespace etwrt
