// The few things the agent needs from its operating system, kept apart so that the rest of
// the agent is the same code on Linux (etwrt) and Windows (real ETW, or Wine's).
#pragma once

#include <cstdint>
#include <string>

namespace etwh::agent {

// The id of this process, as the OS reports it.
std::uint64_t current_pid();

// The id of the calling thread, as the OS reports it (what `--trace` puts callbacks on).
std::uint64_t current_tid();

// Makes stdin/stdout byte streams (no newline translation), so JSON lines arrive unchanged.
void prepare_stdio();

// Ends the process abnormally, at once and without any dialog, as a crashing provider would.
[[noreturn]] void crash_now();

// Ends the process with `code` without running static destructors: runtime threads may still
// be inside our callbacks, and the driver has everything it needs by then.
[[noreturn]] void exit_now(int code);

}  // namespace etwh::agent
