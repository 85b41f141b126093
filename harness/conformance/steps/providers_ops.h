// The ops of the providers and agents family (scenarios/README.md): register, unregister,
// query_enabled, exit_agent, kill_agent.
#pragma once

#include <cstdint>
#include <string>

namespace etwh {

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
