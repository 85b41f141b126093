// etwrt: OpenTrace / ProcessTrace / CloseTrace over trace files (a LogFileName without
// PROCESS_TRACE_MODE_REAL_TIME). consumer.cc hands these calls here; the realtime path does not
// know about files. OpenTrace copies what it needs of the caller's EVENT_TRACE_LOGFILEA and keeps
// no pointer to it: BufferCallback receives the handle's own copy, updated as the file is read.
#pragma once

#include <windows.h>
#include <evntrace.h>

namespace etwrt::etl {

// Opens `logfile.LogFileName` (UTF-8 path): reads the file and its header, fills the caller's
// LogfileHeader, BufferSize, IsKernelTrace, CurrentTime and BuffersRead. Returns the handle, or
// INVALID_PROCESSTRACE_HANDLE when the file cannot be read or is no trace file.
TRACEHANDLE open_file_trace(EVENT_TRACE_LOGFILEA& logfile);

// Whether `handle` is one open_file_trace returned and CloseTrace has not freed.
bool is_file_handle(TRACEHANDLE handle);

// ProcessTrace over file handles only (already checked as the page lists): each file's header
// event first, then every record of every file merged by time.
ULONG process_file_traces(const TRACEHANDLE* handles, ULONG count, const FILETIME* start,
                          const FILETIME* end);

// CloseTrace of a file handle: ERROR_INVALID_HANDLE when unknown; ERROR_CTX_CLOSE_PENDING
// during its ProcessTrace (which then returns after the record in hand).
ULONG close_file_trace(TRACEHANDLE handle);

}  // namespace etwrt::etl
