// Welch's t-test, two-sided, from each sample's count, mean and standard deviation: what can
// still be tested when a Google Benchmark file keeps only the aggregates of its repetitions
// (--benchmark_report_aggregates_only). It assumes normal means, which the U test does not; the
// repetitions themselves, when a file has them, go to the U test (mann_whitney.h).
#pragma once

#include <cstddef>

namespace etwh::compare {

struct SampleStats {
  std::size_t n = 0;
  double mean = 0, stddev = 0;  // stddev with n - 1, as Google Benchmark's
};

struct Welch {
  double t = 0;
  double df = 0;       // Welch-Satterthwaite degrees of freedom
  double p_value = 1;  // two-sided; 1 when a side has fewer than 2 values
};

// Both deviations 0: p 0 when the means differ, else 1.
//   welch_t_test({5, 10, 1}, {5, 12, 1})  // t -3.16, df 8, p 0.0133
Welch welch_t_test(const SampleStats& a, const SampleStats& b);

// I_x(a, b), the regularized incomplete beta function (exposed for tests).
double regularized_beta(double x, double a, double b);

}  // namespace etwh::compare
