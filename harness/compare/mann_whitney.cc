#include "harness/compare/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace etwh::compare {
namespace {

constexpr std::size_t kMaxExactValues = 40;

// P(U <= u) under the null hypothesis, from the number of arrangements of n1 + n2 distinct
// values that give each U: count(i, j, u) = count(i - 1, j, u - j) + count(i, j - 1, u) (the
// largest value is either one of the first sample's, above all j of the second, or not).
double exact_cdf(std::size_t n1, std::size_t n2, std::size_t u) {
  const std::size_t max_u = n1 * n2;
  // counts[j][v]: arrangements of the current i values of the first sample and j of the second.
  std::vector<std::vector<double>> counts(n2 + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t j = 0; j <= n2; ++j) counts[j][0] = 1;  // i = 0: U is 0
  for (std::size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> next(n2 + 1, std::vector<double>(max_u + 1, 0.0));
    next[0][0] = 1;  // j = 0: U is 0
    for (std::size_t j = 1; j <= n2; ++j) {
      for (std::size_t v = 0; v <= max_u; ++v) {
        next[j][v] = next[j - 1][v] + (v >= j ? counts[j][v - j] : 0.0);
      }
    }
    counts = std::move(next);
  }
  double below = 0, total = 0;
  for (std::size_t v = 0; v <= max_u; ++v) {
    total += counts[n2][v];
    if (v <= u) below += counts[n2][v];
  }
  return below / total;
}

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitney result;
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 == 0 || n2 == 0) return result;
  // Midranks of the pooled values; tie groups feed the variance's correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from the first sample
  for (double v : a) pooled.push_back({v, true});
  for (double v : b) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += midrank;
    }
    const auto t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    ties = ties || j - i > 1;
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  const double dn = static_cast<double>(n);
  result.u = rank_sum_a - d1 * (d1 + 1) / 2;

  if (!ties && n <= kMaxExactValues) {
    result.exact = true;
    const auto u = static_cast<std::size_t>(result.u);  // an integer without ties
    const double lower = exact_cdf(n1, n2, u);
    const double upper = exact_cdf(n1, n2, n1 * n2 - u);  // P(U >= u), by symmetry
    result.p_value = std::min(1.0, 2 * std::min(lower, upper));
    return result;
  }
  const double mean = d1 * d2 / 2;
  const double variance = d1 * d2 / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (variance <= 0) return result;  // every value equal: no evidence of a difference
  const double z = std::max(0.0, std::abs(result.u - mean) - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return result;
}

}  // namespace etwh::compare
