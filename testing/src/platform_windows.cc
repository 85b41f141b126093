// Windows: real ETW. Before the first capture, the sweep of the sessions tests that crashed left
// running (named etwh-<pid>-..., their process gone: ETW sessions outlive their controller),
// then whether this process can capture at all (capture_refusal).
#include "platform_home.h"

#include "harness/environment/stale_sessions.h"

#include <windows.h>

#include <iostream>
#include <sstream>

namespace etwh::testing {

std::optional<std::string> prepare_platform() {
  static const std::optional<std::string> answer = []() -> std::optional<std::string> {
    std::ostringstream log;
    (void)stop_stale_sessions(GetCurrentProcessId(), log);
    // What the sweep stopped (or why it could not list the sessions), for the test's log.
    if (!log.str().empty()) std::cerr << "etwh::testing: " << log.str() << std::flush;
    if (std::optional<std::string> refusal = capture_refusal()) return refusal;
    return std::nullopt;
  }();
  return answer;
}

std::string session_prefix() { return "etwh-" + std::to_string(GetCurrentProcessId()) + "-"; }

std::string private_home() { return {}; }

void enter_home(HomeScope) {}
void leave_home(HomeScope) {}

}  // namespace etwh::testing
