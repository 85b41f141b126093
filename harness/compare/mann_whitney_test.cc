#include "harness/compare/mann_whitney.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace etwh::compare {
namespace {

using V = std::vector<double>;

// The exact distribution of U for 3 against 3 values, counted by hand over the 20 ways to
// interleave them: U = 0..9 occurs 1, 1, 2, 3, 3, 3, 3, 2, 1, 1 times.
TEST(MannWhitney, ExactSmallSamples) {
  MannWhitney r = mann_whitney_u(V{1, 2, 3}, V{4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 20);  // P(U <= 0) = 1/20, two-sided

  r = mann_whitney_u(V{1, 3, 5}, V{2, 4, 6});  // ranks 1 + 3 + 5 = 9: U = 9 - 6 = 3
  EXPECT_DOUBLE_EQ(r.u, 3);
  EXPECT_DOUBLE_EQ(r.p_value, 2 * 7.0 / 20);  // P(U <= 3) = (1 + 1 + 2 + 3) / 20

  r = mann_whitney_u(V{6, 5, 4}, V{1, 2, 3});  // the other way round: U = 9, same p
  EXPECT_DOUBLE_EQ(r.u, 9);
  EXPECT_DOUBLE_EQ(r.p_value, 0.1);

  // 5 against 5, fully separated: 1 arrangement of C(10, 5) = 252 on each side.
  r = mann_whitney_u(V{1, 2, 3, 4, 5}, V{6, 7, 8, 9, 10});
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-12);

  // One value each: nothing can be concluded.
  EXPECT_DOUBLE_EQ(mann_whitney_u(V{1}, V{2}).p_value, 1.0);
}

// With ties: a = {1, 2, 2}, b = {2, 3, 3}. Midranks 1 | 3 3 3 | 5.5 5.5, so R_a = 7, U = 1;
// mean 4.5; tie term (27 - 3) + (8 - 2) = 30; variance 9/12 * (7 - 30/30) = 4.5;
// z = (3.5 - 0.5) / sqrt(4.5) = sqrt(2); p = erfc(1).
TEST(MannWhitney, NormalApproximationWithTieCorrection) {
  const MannWhitney r = mann_whitney_u(V{1, 2, 2}, V{2, 3, 3});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 1);
  EXPECT_NEAR(r.p_value, std::erfc(1.0), 1e-12);
}

// 25 against 25, separated: mean 312.5, variance 625 / 12 * 51 = 2656.25,
// z = 312 / 51.5388 = 6.0537, p = 1.42e-9.
TEST(MannWhitney, NormalApproximationForLargeSamples) {
  V a, b;
  for (int i = 1; i <= 25; ++i) {
    a.push_back(i);
    b.push_back(25 + i);
  }
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, std::erfc(312 / std::sqrt(2656.25) / std::sqrt(2.0)), 1e-15);
  EXPECT_LT(r.p_value, 2e-9);
  EXPECT_GT(r.p_value, 1e-9);
}

TEST(MannWhitney, IdenticalOrEmptySamplesShowNoDifference) {
  EXPECT_DOUBLE_EQ(mann_whitney_u(V{5, 5, 5}, V{5, 5, 5}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u(V{}, V{1, 2}).p_value, 1.0);
}

}  // namespace
}  // namespace etwh::compare
