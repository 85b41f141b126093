// Reads a recorded .etl file for `etwh judge` through the Win32 API only (OpenTraceA with
// LogFileName, ProcessTrace, TdhGetEventInformation), so that it reads the same on Windows, on
// Wine and on etwrt: each record is summed into its event kind, and the first event of each
// kind is decoded by TDH (TraceLogging from the events themselves, manifest events from the
// manifests loaded with load_manifest).
#pragma once

#include "harness/recorded/recorded_trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace etwh::recorded {

// Plays `file` through ProcessTrace. Never throws for a file that does not open or play: the
// statuses are in the result (open_status, process_status).
RecordedTrace read_trace(const std::string& file);

// TdhLoadManifest for the decoding of the traces read after it: ERROR_SUCCESS or TDH's status.
// The manifests stay loaded until unload_manifests.
std::uint32_t load_manifest(const std::string& manifest);
void unload_manifests();

}  // namespace etwh::recorded
