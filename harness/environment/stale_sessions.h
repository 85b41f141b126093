// Before `etwh run` drives any case: whether this process may control event tracing sessions
// at all, and the sessions an earlier run left behind. ETW sessions outlive the process that
// started them, so a run that crashed (or was SIGKILLed) leaves its sessions running; on Windows
// they hold on to one of the machine's few session slots until someone stops them.
//
// The rule: `etwh run` names every session "etwh-<pid>-<case>-<label>" (driver.h,
// session_prefix). A running session whose name has that form, whose <pid> is not this
// process and is no live process, belongs to a run that ended without stopping it: it is
// stopped. A pid that is alive again (reused by an unrelated process) keeps its sessions: never
// stop what may be a live run's.
#pragma once

#include "harness/model/result.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The process id in a session name made by `etwh run`, or nullopt when the name is not one.
//   etwh_run_pid("etwh-4242-3-s1") == 4242; etwh_run_pid("etwh-x-1") == std::nullopt
std::optional<unsigned long> etwh_run_pid(std::string_view session_name);

// A session an earlier run left, and what ControlTrace(STOP) returned for it.
using StaleSession = StaleSessionStop;

// Stops the sessions of runs that ended (the rule above; `own_pid` is this run's), each said on
// `log`. Nothing is stopped when the sessions cannot be listed (QueryAllTracesA fails: said on
// `log`, the run goes on).
std::vector<StaleSession> stop_stale_sessions(unsigned long own_pid, std::ostream& log);

// Whether this process may control sessions: starts a realtime session named `probe_name` and
// stops it. False only when StartTraceA answers ERROR_ACCESS_DENIED (said once on `log`, with
// the remedy); any other failure (the session limit, say) is left to the cases to report.
bool may_control_sessions(const std::string& probe_name, std::ostream& log);

// Both, before a run whose sessions are named `session_prefix` ("etwh-<pid>-"): the sessions
// stopped, or nullopt when the run must not start (no right to control sessions: exit 2).
std::optional<std::vector<StaleSession>> prepare_sessions_for_run(const std::string& session_prefix,
                                                                  unsigned long own_pid,
                                                                  std::ostream& log);

}  // namespace etwh
