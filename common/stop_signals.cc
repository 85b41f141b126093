#include "etwh/stop_signals.h"

#include <atomic>
#include <csignal>
#include <string>

namespace etwh {
namespace {

// A signal handler can only reach state with static storage; this is the one such variable,
// written by the handler alone.
std::atomic<int> requested_by{0};
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  if (!requested_by.compare_exchange_strong(none, sig)) {
    // Asked twice: stop waiting for the orderly way.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
#ifdef _WIN32
  std::signal(sig, on_stop_signal);  // the CRT resets the handler before calling it
#endif
}

}  // namespace

StopRequested::StopRequested()
    : std::runtime_error("stopped by signal " + std::to_string(stop_signal())) {}

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int stop_signal() { return requested_by.load(); }

int end_stop_signals(int exit_code) {
  // From here a signal ends the process as if no handler had been installed, so none can
  // arrive unseen between this check and the exit.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return stop_requested() ? stop_exit_code() : exit_code;
}

int stop_exit_code() { return 128 + stop_signal(); }

void throw_if_stop_requested() {
  if (stop_requested()) throw StopRequested();
}

}  // namespace etwh
