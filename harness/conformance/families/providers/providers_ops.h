// The ops of the providers and agents family (scenarios/README.md): register, unregister,
// query_enabled, exit_agent, kill_agent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kRegister = "register";
inline constexpr std::string_view kUnregister = "unregister";
inline constexpr std::string_view kQueryEnabled = "query_enabled";
inline constexpr std::string_view kExitAgent = "exit_agent";
inline constexpr std::string_view kKillAgent = "kill_agent";
}  // namespace ops

// register, unregister.
struct ProviderStep {
  std::string provider;
};

// query_enabled: EventProviderEnabled(level, keyword).
struct QueryEnabledStep {
  std::string provider;
  std::uint8_t level = 0;
  std::uint64_t keyword = 0;
};

// exit_agent, kill_agent.
struct AgentStep {
  std::string agent;
};

}  // namespace etwh
