// What the harness needs to know about the machine it runs on, in one place: which platform a
// build judges by default, how executables are named, where the program lives, the host, the
// clock, and (etwrt only) a private broker home for a run. Everything else is portable code.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "etwh/build_platform.h"

namespace etwh {

// `stem` as an executable file name here ("etwh-agent" or "etwh-agent.exe").
std::string executable_name(std::string_view stem);

// The folder of the running program (argv0 only when the system cannot say).
std::filesystem::path self_dir(const char* argv0);

std::string utc_now();  // ISO 8601, seconds, "Z"
std::string host_name();
unsigned long process_id();

// Gives a run a private etwrt broker home (ETWRT_HOME) unless the caller set one, owned by this
// process (ETWRT_BROKER_OWNER_PID: its broker ends with it), and removes it on destruction.
// Nothing on Windows, where the platform's own ETW answers.
class PrivateEtwrtHome {
 public:
  PrivateEtwrtHome();
  ~PrivateEtwrtHome();
  PrivateEtwrtHome(const PrivateEtwrtHome&) = delete;
  PrivateEtwrtHome& operator=(const PrivateEtwrtHome&) = delete;

 private:
  std::filesystem::path dir_;
};

}  // namespace etwh
