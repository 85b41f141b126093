// The Mann-Whitney U test (Wilcoxon rank-sum), two-sided: do two sets of measurements come
// from the same distribution? It assumes nothing about their shape, which suits timings (skewed,
// with outliers). `etwh compare` runs it over repetitions, as Google Benchmark's compare.py does.
#pragma once

#include <span>

namespace etwh::compare {

struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (a, b) with a > b, ties counting one half
  double p_value = 1;  // two-sided
  bool exact = false;  // exact distribution (small samples, no ties) or the normal approximation
};

// Exact p-value when there are no ties and at most 40 values in all (the count of arrangements
// is then exact in a double); otherwise the normal approximation with the tie correction of the
// variance and a continuity correction of 1/2. An empty sample gives p = 1.
//   mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6})  // U 0, p 0.1
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

}  // namespace etwh::compare
