// The agent's last_error op (PROTOCOL.md): an ETW call that must fail, and the thread's last
// error it leaves, read at once with GetLastError, as code that follows the reference pages does.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace etwh::agent {

// SetLastError(ERROR_SUCCESS), then `api` with an argument its page says fails: OpenTrace of a
// NULL Logfile; GetTraceLoggerHandle of a WNODE_HEADER, GetTraceEnableLevel and
// GetTraceEnableFlags of a handle, that are no session's. The reply: status (GetLastError
// right after the call), failed (the call returned its failure value), returned (that value).
// An empty object when `api` is none of these.
nlohmann::json call_and_read_last_error(const std::string& api);

}  // namespace etwh::agent
