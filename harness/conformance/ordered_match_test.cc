#include "harness/conformance/ordered_match.h"

#include <gtest/gtest.h>

namespace etwh {
namespace {

using Pairs = std::vector<std::pair<std::size_t, std::size_t>>;
using Indexes = std::vector<std::size_t>;

TEST(MatchInOrder, PairsAfterWhatEarlierStepsConsumed) {
  const OrderedMatch m = match_in_order(2, 5, 2);
  EXPECT_EQ(m.pairs, (Pairs{{0, 2}, {1, 3}}));
  EXPECT_EQ(m.missing, Indexes{});
  EXPECT_EQ(m.extra, Indexes{4});
}

TEST(MatchInOrder, WhatNeverCameIsMissing) {
  const OrderedMatch m = match_in_order(3, 3, 2);
  EXPECT_EQ(m.pairs, (Pairs{{0, 2}}));
  EXPECT_EQ(m.missing, (Indexes{1, 2}));
  EXPECT_EQ(m.extra, Indexes{});
  EXPECT_EQ(match_in_order(0, 1, 0).extra, Indexes{0});
  EXPECT_EQ(match_in_order(1, 0, 0).missing, Indexes{0});
}

}  // namespace
}  // namespace etwh
