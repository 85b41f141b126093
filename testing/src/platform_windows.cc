// Windows: real ETW. Before the first capture, whether this process may control sessions at
// all (an administrator or a member of Performance Log Users), and the sweep of the sessions
// tests that crashed left running (named etwh-<pid>-..., their process gone: ETW sessions
// outlive their controller).
#include "platform_home.h"

#include "stale_sessions.h"

#include <windows.h>

#include <sstream>

namespace etwh::testing {

std::optional<std::string> prepare_platform() {
  static const std::optional<std::string> answer = []() -> std::optional<std::string> {
    std::ostringstream log;
    const unsigned long pid = GetCurrentProcessId();
    if (!may_control_sessions(session_prefix() + "probe", log)) {
      return "this process may not control ETW sessions (run it elevated, or as a member of "
             "Performance Log Users): " +
             log.str();
    }
    (void)stop_stale_sessions(pid, log);
    return std::nullopt;
  }();
  return answer;
}

std::string session_prefix() { return "etwh-" + std::to_string(GetCurrentProcessId()) + "-"; }

std::string private_home() { return {}; }

}  // namespace etwh::testing
