// What differs between the platforms under a capture: on Linux the private etwrt home and
// broker of the test process, on Windows the right to control sessions and the sessions that
// crashed tests left behind.
#pragma once

#include "etwh/testing/capture.h"

#include <optional>
#include <string>

namespace etwh::testing {

// Readies the platform for this process's captures (once; later calls repeat the first answer).
// A reason when captures cannot run here (no right to control sessions, no private home).
std::optional<std::string> prepare_platform();

// Why this process cannot capture, from a probe session started and stopped once (the first
// call; later calls repeat its answer): no right to control sessions, or no realtime consumer.
std::optional<std::string> capture_refusal();

// Linux: before a capture's (or check's) sessions start, a home no capture used yet when
// `scope` is HomeScope::capture; after it stopped, a fresh home for whatever registers next.
// No-ops on Windows (one ETW per machine) and with ETWH_TESTING_HOME=inherit.
void enter_home(HomeScope scope);
void leave_home(HomeScope scope);

// "etwh-<pid>-": the sessions of a test are named after its process, so that a later test can
// tell a dead test's sessions from a live one's (harness/environment/stale_sessions.h's rule).
std::string session_prefix();

}  // namespace etwh::testing
