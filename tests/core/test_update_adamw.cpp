// Seed 003 §6 "Partial Invariances": AdamW is invariant to coordinatewise gradient scale (with ε → 0)
// but not to a full factor gauge; SGD is orthogonally equivariant but not scale-equivariant.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using namespace gaugelab::test::update;

namespace {
constexpr int kTrials = 1000;  // random sequences per property (project floor)
}

TEMPLATE_TEST_CASE("adamw (eps = 0, fresh state) is invariant to coordinatewise gradient scale", "[update][adamw]",
                   double, float) {
  using T = TestType;
  // m and √v both scale by c_ij, so m ⊘ √v is unchanged; the arithmetic differs only by rounding
  // (a few ulps per step over 5 steps).
  const double tol = std::is_same_v<T, double> ? 1e-13 : 1e-5;
  Rng rng(401);
  for (int t = 0; t < kTrials; ++t) {
    AdamWOptions o;
    o.eps = 0.0;
    o.bias_correction = (t % 2 == 0);
    const Mat<T> W = gaussian<T>(rng, 3, 4);
    Mat<T> C(3, 4);  // positive coordinatewise scales over six decades
    for (Index i = 0; i < C.size(); ++i) C(i) = static_cast<T>(std::pow(10.0, uniform(rng, -3.0, 3.0)));
    RuleState<T> s0, s1;
    for (int k = 0; k < 5; ++k) {
      const Mat<T> G = gaussian<T>(rng, 3, 4);
      const Step<T> a = adamw_step(o, W, G, s0);
      const Step<T> b = adamw_step(o, W, Mat<T>(G.cwiseProduct(C)), s1);
      REQUIRE(rel_diff(b.U, a.U) <= tol);
    }
  }
}

TEST_CASE("adamw is not equivariant under a general factor gauge", "[update][adamw]") {
  // W → WS moves the gradient as G → G·S⁻ᵀ. A compatible increment would be U·S; AdamW's elementwise
  // normalisation gives neither U·S nor U·S⁻ᵀ. Errors are O(1) for κ = 10 gauges.
  constexpr double kMustExceed = 1e-3;  // 1e10 × the round-off of the invariance above
  Rng rng(402);
  std::vector<double> e_vec, e_cov;
  for (int t = 0; t < kTrials; ++t) {
    const Mat<double> W = gaussian<double>(rng, 5, 3), G = gaussian<double>(rng, 5, 3);
    const Mat<double> S = sample_gl<double>(rng, 3, 10.0);
    const Mat<double> Sit = S.inverse().transpose();
    AdamWOptions o;
    o.eps = 0.0;
    RuleState<double> a, b;
    const Mat<double> U0 = adamw_step(o, W, G, a).U;
    const Mat<double> Us = adamw_step(o, Mat<double>(W * S), Mat<double>(G * Sit), b).U;
    e_vec.push_back(rel_diff(Us, Mat<double>(U0 * S)));
    e_cov.push_back(rel_diff(Us, Mat<double>(U0 * Sit)));
  }
  std::sort(e_vec.begin(), e_vec.end());
  std::sort(e_cov.begin(), e_cov.end());
  CHECK(e_vec.front() > kMustExceed);
  CHECK(e_cov.front() > kMustExceed);
  CHECK(e_vec[kTrials / 2] > 0.3);
  CHECK(e_cov[kTrials / 2] > 0.3);
}

TEST_CASE("sgd is orthogonally equivariant but not under a diagonal rescaling", "[update]") {
  constexpr double kRoundOff = 1e-14;  // U = −ηG: one product with Q
  Rng rng(403);
  double worst_orth = 0.0, min_diag = 1e300;
  for (int t = 0; t < kTrials; ++t) {
    const Mat<double> W = gaussian<double>(rng, 4, 3), G = gaussian<double>(rng, 4, 3);
    const Mat<double> Q = sample_orthogonal<double>(rng, 3), S = sample_diagonal<double>(rng, 3, 1.0);
    RuleState<double> st;
    const Mat<double> U0 = sgd_step(SgdOptions{}, W, G, st).U;
    worst_orth = std::max(worst_orth, rel_diff(sgd_step(SgdOptions{}, Mat<double>(W * Q), Mat<double>(G * Q), st).U,
                                               Mat<double>(U0 * Q)));
    min_diag = std::min(min_diag, rel_diff(sgd_step(SgdOptions{}, Mat<double>(W * S), Mat<double>(G * S.inverse()), st).U,
                                           Mat<double>(U0 * S)));
  }
  CHECK(worst_orth <= kRoundOff);
  CHECK(min_diag > 1e-3);
}

}  // namespace GAUGELAB_TU
