#include "harness/conformance/ordered_match.h"

namespace etwh {

OrderedMatch match_in_order(std::size_t expected, std::size_t arrived, std::size_t consumed) {
  OrderedMatch m;
  for (std::size_t k = 0; k < expected; ++k) {
    if (consumed + k < arrived) {
      m.pairs.emplace_back(k, consumed + k);
    } else {
      m.missing.push_back(k);
    }
  }
  for (std::size_t g = consumed + expected; g < arrived; ++g) m.extra.push_back(g);
  return m;
}

}  // namespace etwh
