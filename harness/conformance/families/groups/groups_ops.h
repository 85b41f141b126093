// The ops of the groups and disallow lists family (scenarios/README.md): disallow. A provider
// group's enable is a ControlStep with its `group` (sessions_ops.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kDisallow = "disallow";
}  // namespace ops

// disallow: TraceSetDisallowList of `session` with the GUIDs of `providers` (labels).
struct DisallowStep {
  std::string session;
  std::vector<std::string> providers;
};

}  // namespace etwh
