// SIGINT and SIGTERM as a request to stop, not a sudden death. A command that starts sessions
// and child processes installs the handlers, polls stop_requested() between steps and while
// it waits, and on a request unwinds normally (stopping its sessions, ending and reaping its
// children, removing its temporary files), then exits with stop_exit_code(): 130 for SIGINT,
// 143 for SIGTERM, as a shell reports a process those signals ended.
//
//   etwh::catch_stop_signals();
//   for (const Case& c : cases) {
//     if (etwh::stop_requested()) break;
//     run(c);
//   }
//   if (etwh::stop_requested()) return etwh::stop_exit_code();
#pragma once

#include <stdexcept>

namespace etwh {

// Thrown by waits that give up because a stop was requested (throw_if_stop_requested()).
class StopRequested : public std::runtime_error {
 public:
  StopRequested();
};

// Installs the SIGINT and SIGTERM handlers. The first signal records a request; a second one
// ends the process at once, as if no handler were installed (for a stop that hangs).
void catch_stop_signals();

// The signal that asked this process to stop (SIGINT or SIGTERM), or 0.
int stop_signal();

inline bool stop_requested() { return stop_signal() != 0; }

// The last call before a program that caught the signals exits: puts back the default action
// of SIGINT and SIGTERM, then returns stop_exit_code() if a stop was requested, else
// `exit_code`. A signal that comes after it ends the process (a shell sees 130 or 143 again).
int end_stop_signals(int exit_code);

// 128 + stop_signal(): 130 for SIGINT, 143 for SIGTERM.
int stop_exit_code();

// Throws StopRequested if a stop was requested.
void throw_if_stop_requested();

}  // namespace etwh
