#include "harness/compare/welch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace etwh::compare {
namespace {

TEST(RegularizedBeta, KnownValues) {
  EXPECT_DOUBLE_EQ(regularized_beta(0, 2, 3), 0);
  EXPECT_DOUBLE_EQ(regularized_beta(1, 2, 3), 1);
  // I_x(1, 1) = x; I_x(2, 1) = x^2; I_0.5(a, a) = 0.5.
  EXPECT_NEAR(regularized_beta(0.3, 1, 1), 0.3, 1e-12);
  EXPECT_NEAR(regularized_beta(0.6, 2, 1), 0.36, 1e-12);
  EXPECT_NEAR(regularized_beta(0.5, 4.5, 4.5), 0.5, 1e-12);
  // I_x(a, 1/2) as Student's t uses it, both sides of the symmetry.
  EXPECT_NEAR(regularized_beta(0.9, 0.5, 0.5), 1 - 2 / std::numbers::pi * std::asin(std::sqrt(0.1)),
              1e-12);
}

TEST(WelchTest, StudentTablesTwoSided) {
  // t = -3.162, df = 8: p = 0.0134 (Student's t, two-sided).
  const Welch w = welch_t_test({5, 10, 1}, {5, 12, 1});
  EXPECT_NEAR(w.t, -3.1623, 1e-4);
  EXPECT_NEAR(w.df, 8, 1e-12);
  EXPECT_NEAR(w.p_value, 0.013349, 1e-5);
  // t = 2.228 at df = 10 is the 0.05 point of the tables.
  const double mean = 2.228138851986274 * std::sqrt(2.0 / 6);
  EXPECT_NEAR(welch_t_test({6, mean, 1}, {6, 0, 1}).p_value, 0.05, 1e-7);
  // Unequal deviations: df by Welch-Satterthwaite.
  EXPECT_NEAR(welch_t_test({10, 0, 1}, {4, 0, 3}).df, 3.2704, 1e-4);
}

TEST(WelchTest, DegenerateSamples) {
  EXPECT_EQ(welch_t_test({1, 10, 0}, {5, 12, 1}).p_value, 1);  // one value: no deviation
  EXPECT_EQ(welch_t_test({5, 10, 0}, {5, 10, 0}).p_value, 1);
  EXPECT_EQ(welch_t_test({5, 10, 0}, {5, 11, 0}).p_value, 0);
}

}  // namespace
}  // namespace etwh::compare
