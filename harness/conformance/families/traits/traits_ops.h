// The ops of the traits family (scenarios/README.md): set_traits.
#pragma once

#include "harness/conformance/families/sessions/filter_def.h"

#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kSetTraits = "set_traits";
}  // namespace ops

// set_traits: either structured (built into a blob by the driver) or a raw blob.
struct TraitsStep {
  std::string provider;
  bool raw = false;
  std::vector<std::uint8_t> blob;  // raw form, possibly malformed on purpose
  std::string name;                // structured form
  std::optional<GUID> group;
  std::vector<FilterDef> custom;  // {type, data} of each custom trait
};

}  // namespace etwh
