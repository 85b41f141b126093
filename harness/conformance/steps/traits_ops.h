// The ops of the traits family (scenarios/README.md): set_traits.
#pragma once

#include "harness/conformance/steps/sessions_ops.h"  // FilterDef

#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwh {

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
