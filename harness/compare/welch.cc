#include "harness/compare/welch.h"

#include <cmath>

namespace etwh::compare {
namespace {

// The continued fraction of I_x(a, b), evaluated by the modified Lentz method; converges fast
// for x < (a + 1) / (a + b + 2).
double beta_fraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300, kEpsilon = 1e-15;
  constexpr int kMaxTerms = 500;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double f = d;
  for (int m = 1; m <= kMaxTerms; ++m) {
    // Two terms per step: the even d_{2m} and the odd d_{2m+1} of the fraction.
    const double even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
    const double odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
    for (int k = 0; k < 2; ++k) {
      const double term = k == 0 ? even : odd;
      d = 1 + term * d;
      if (std::abs(d) < kTiny) d = kTiny;
      c = 1 + term / c;
      if (std::abs(c) < kTiny) c = kTiny;
      d = 1 / d;
      f *= c * d;
      if (k == 1 && std::abs(c * d - 1) < kEpsilon) return f;
    }
  }
  return f;
}

}  // namespace

double regularized_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  // The fraction converges on the side of the symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(x, a, b) / a;
  return 1 - front * beta_fraction(1 - x, b, a) / b;
}

Welch welch_t_test(const SampleStats& a, const SampleStats& b) {
  Welch w;
  if (a.n < 2 || b.n < 2) return w;
  const double va = a.stddev * a.stddev / static_cast<double>(a.n);
  const double vb = b.stddev * b.stddev / static_cast<double>(b.n);
  const double se2 = va + vb;
  if (se2 <= 0) {
    w.p_value = a.mean == b.mean ? 1 : 0;
    return w;
  }
  w.t = (a.mean - b.mean) / std::sqrt(se2);
  w.df =
      se2 * se2 / (va * va / static_cast<double>(a.n - 1) + vb * vb / static_cast<double>(b.n - 1));
  // P(|T| >= |t|) for Student's t with df degrees of freedom.
  w.p_value = regularized_beta(w.df / (w.df + w.t * w.t), w.df / 2, 0.5);
  return w;
}

}  // namespace etwh::compare
