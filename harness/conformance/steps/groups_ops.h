// The ops of the groups and disallow lists family (scenarios/README.md): disallow. A provider
// group's enable is a ControlStep with its `group` (sessions_ops.h).
#pragma once

#include <string>
#include <vector>

namespace etwh {

// disallow: TraceSetDisallowList of `session` with the GUIDs of `providers` (labels).
struct DisallowStep {
  std::string session;
  std::vector<std::string> providers;
};

}  // namespace etwh
