// etwrt only: which broker serves the run, read from its pid file in ETWRT_HOME, so that a
// broker that died or restarted during a case or a stress run is reported as a fault of the
// harness's environment (HARNESS_ERROR), never as the platform failing rules. Nothing on
// Windows, where ETWRT_HOME is not set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace etwh {

struct BrokerIdentity {
  long pid = 0;
  std::int64_t pid_file_time = 0;  // the pid file's modification time: pids are reused
  bool alive = false;              // a SIGKILLed broker leaves its pid file behind
  bool operator==(const BrokerIdentity& o) const {
    return pid == o.pid && pid_file_time == o.pid_file_time;
  }
};

// The broker of `home` (its broker.pid), or nullopt when there is none (not started yet, or
// ended when idle: it removes its pid file then).
std::optional<BrokerIdentity> broker_of(const std::filesystem::path& home);

// The broker of $ETWRT_HOME; nullopt when ETWRT_HOME is not set.
std::optional<BrokerIdentity> current_broker();

// "" when the broker that served at `before` (if any) still serves at `after`; else what
// happened during `span` ("the case"), for a fault text: "the etwrt broker (pid 12) ended
// during the case and pid 34 replaced it".
std::string broker_change(const std::optional<BrokerIdentity>& before,
                          const std::optional<BrokerIdentity>& after, const std::string& span);

// Why etwrt cannot work here, named before anything runs ("" when nothing is wrong, and on
// Windows): ETWRT_HOME set to something that is not a directory, or a path too long to use.
std::string etwrt_environment_problem();

}  // namespace etwh
