// How the expected items of a step meet what arrived, for every kind of callback the driver
// judges (enable callbacks, classic ControlCallbacks): in order, after what earlier steps of
// the case already matched. One definition, so that both paths judge alike.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace etwh {

struct OrderedMatch {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (expected index, arrived index)
  std::vector<std::size_t> missing;  // expected indexes with nothing arrived for them
  std::vector<std::size_t> extra;    // arrived indexes beyond every expected one
};

// `arrived` items are there in all, of which earlier steps matched the first `consumed`; this
// step expects the next `expected`. Example: expected 2, arrived 5, consumed 2 gives pairs
// (0,2) (1,3) and extra {4}; expected 2, arrived 3, consumed 2 gives (0,2) and missing {1}.
OrderedMatch match_in_order(std::size_t expected, std::size_t arrived, std::size_t consumed);

}  // namespace etwh
