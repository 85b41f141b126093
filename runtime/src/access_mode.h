// libetwrt: the simulated right to control event tracing sessions (ETWRT_DENY_CONTROL). On
// Windows only administrators, members of Performance Log Users and the service accounts may
// start, control and enable sessions or consume them in real time; others get
// ERROR_ACCESS_DENIED. The right belongs to the calling process (its token), so each process's
// library reads the variable; the broker knows nothing of it.
#pragma once

#include <nlohmann/json.hpp>

namespace etwrt {

// True when ETWRT_DENY_CONTROL makes this process a caller without the right: "1" denies,
// unset, empty or "0" allows. Any other value denies too (failing closed), said once on stderr.
// Read at every call, so a test may switch it.
bool control_denied();

// Whether a broker request needs the right: StartTrace, ControlTrace, EnableTraceEx2,
// TraceSetInformation and OpenTrace (their pages list ERROR_ACCESS_DENIED for such callers).
// Registering and writing events need none.
bool needs_control_right(const nlohmann::json& request);

}  // namespace etwrt
