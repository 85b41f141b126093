// A filter as an enable gives it (sessions_ops.h), apart from the ops: the oracle's model, lint
// and the traits family read filters without depending on the family's list of ops.
#pragma once

#include <cstdint>
#include <vector>

namespace etwh {

// An EVENT_FILTER_DESCRIPTOR of an enable (also the {type, data} of a custom trait).
struct FilterDef {
  std::uint32_t type = 0;
  std::vector<std::uint8_t> data;
};

}  // namespace etwh
