// The Gram-based spread metrics against the [m, n] products formed explicitly, on small factors.
#include "harness_test_support.hpp"

#include "core/random.hpp"
#include "harness/diag_spread.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using harness::HeadFactors;
using harness::kFactors;
using Mat = core::Mat<double>;

namespace {

// Both sides are sums of O(1)-sized terms computed in double: agreement to 1e-12 relative leaves
// room for a few hundred roundings and would catch any wrong coefficient or transposed block.
constexpr double kAgree = 1e-12;

HeadFactors random_factors(core::Rng& rng, double scale = 1.0) {
  HeadFactors f;
  f[harness::kQA] = core::randn<double>(rng, 13, 4, scale);
  f[harness::kQB] = core::randn<double>(rng, 13, 4, scale);
  f[harness::kVA] = core::randn<double>(rng, 13, 4, scale);
  f[harness::kVB] = core::randn<double>(rng, 11, 4, scale);
  return f;
}

HeadFactors grams_of(const HeadFactors& f) {
  HeadFactors g;
  for (int i = 0; i < kFactors; ++i) g[i] = f[i].transpose() * f[i];
  return g;
}

double direct_exact2(const HeadFactors& base, const HeadFactors& v, const harness::StepCoefs& c) {
  const HeadFactors s = harness::stepped(base, v, c);
  double n = 0;
  for (int k = 0; k < 2; ++k) n += (s[2 * k] * s[2 * k + 1].transpose() - base[2 * k] * base[2 * k + 1].transpose()).squaredNorm();
  return n;
}

}  // namespace

TEST_CASE("spread metrics: block Grams reproduce the explicitly formed motions", "[harness][metrics]") {
  core::Rng rng(11);
  const HeadFactors base = random_factors(rng), u = random_factors(rng, 0.1), d = random_factors(rng, 0.01);
  HeadFactors v;
  for (int i = 0; i < kFactors; ++i) v[i] = u[i] + d[i];
  harness::MotionGrams m = harness::reference_grams(base, grams_of(base), u);

  double first_u = 0;
  for (int k = 0; k < 2; ++k)
    first_u += (u[2 * k] * base[2 * k + 1].transpose() + base[2 * k] * u[2 * k + 1].transpose()).squaredNorm();
  CHECK(std::abs(harness::first_order_norm2(m) - first_u) <= kAgree * first_u);

  harness::StepCoefs cr, cg;
  for (std::size_t i = 0; i < 4; ++i) {
    cr.alpha[i] = 0.97 + 0.01 * static_cast<double>(i);
    cr.beta[i] = 0.5;
    cg.alpha[i] = 0.95;
    cg.beta[i] = 0.4 + 0.05 * static_cast<double>(i);
  }
  const double ex = direct_exact2(base, u, cr);
  CHECK(std::abs(harness::exact_motion_norm2(m, cr) - ex) <= kAgree * ex);

  const harness::MotionGrams md = harness::difference_grams(m, base, u, d);
  double first_d = 0;
  for (int k = 0; k < 2; ++k)
    first_d += (d[2 * k] * base[2 * k + 1].transpose() + base[2 * k] * d[2 * k + 1].transpose()).squaredNorm();
  CHECK(std::abs(harness::first_order_difference_norm2(md) - first_d) <= kAgree * first_d);

  const HeadFactors sg = harness::stepped(base, v, cg), sr = harness::stepped(base, u, cr);
  double diff = 0;
  for (int k = 0; k < 2; ++k)
    diff += (sg[2 * k] * sg[2 * k + 1].transpose() - sr[2 * k] * sr[2 * k + 1].transpose()).squaredNorm();
  CHECK(std::abs(harness::exact_difference_norm2(md, cg, cr) - diff) <= kAgree * diff);
}

TEST_CASE("spread metrics: equal steps give exactly zero difference", "[harness][metrics]") {
  core::Rng rng(12);
  const HeadFactors base = random_factors(rng), u = random_factors(rng, 0.1);
  const harness::MotionGrams m = harness::reference_grams(base, grams_of(base), u);
  HeadFactors zero;
  for (int i = 0; i < kFactors; ++i) zero[i] = Mat::Zero(u[i].rows(), u[i].cols());
  const harness::MotionGrams md = harness::difference_grams(m, base, u, zero);
  harness::StepCoefs c;
  c.beta = {0.3, 0.3, 0.3, 0.3};
  CHECK(harness::first_order_difference_norm2(md) == 0.0);
  CHECK(harness::exact_difference_norm2(md, c, c) == 0.0);
}

TEST_CASE("spread metrics: median and max over gauges leave failed gauges out", "[harness][metrics]") {
  const double nan = std::nan("");
  auto s = harness::summarise({3.0, nan, 1.0, 2.0, 10.0});
  CHECK(s.count == 4);
  CHECK(s.median == 2.5);
  CHECK(s.max == 10.0);
  s = harness::summarise({nan});
  CHECK(s.count == 0);
  CHECK(std::isnan(s.median));
  CHECK(harness::summarise({4.0, 1.0, 2.0}).median == 2.0);
}

}  // namespace GAUGELAB_TU
