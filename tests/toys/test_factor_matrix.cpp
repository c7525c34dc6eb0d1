// factor-matrix (seed 003 §3): gradients, closed forms of the plain and corrected step against the
// core's simulation, and the gauge (in)dependence of the step.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "toys/factor_common.hpp"
#include "toys/factor_matrix.hpp"

using namespace gaugelab;
using core::Mat;

namespace {

// Closed form vs simulation where the representative holds M to better than 1e-12 (K ≤ 100, i.e.
// cond(S) ≤ 1e4): a few hundred ulps of O(1) sums.
constexpr double kAgree = 1e-12;
// Beyond that, errors in units of u·‖A‖_F‖B‖_F (the round-off any product ABᵀ of such factors
// carries). The computation chains ~10 r-term products, one QR solve and one SVD, each within a
// small multiple of u·scale; 64 leaves room for those constants (measured max ≈ 12), while a
// wrong closed form — e.g. dropping the η²·G·M⁺·G term, 1e-12 of ‖M‖ at K = 1, ≈ 5e3 units — fails.
constexpr double kFloorUnits = 64;
// Central differences of a quadratic-in-each-factor loss: O(h²) truncation at h = 1e-6 plus
// cancellation ≈ 1e-10/h; 1e-7 relative is comfortably above both and far below any real error.
constexpr double kFdStep = 1e-6, kFdTol = 1e-7;

}  // namespace

TEST_CASE("factor-matrix: factor gradients equal finite differences", "[toys][factor-matrix]") {
  core::Rng rng(7);
  const core::FactorPair<double> p{core::randn<double>(rng, 4, 2), core::randn<double>(rng, 3, 2)};
  const Mat<double> Y = core::randn<double>(rng, 4, 3);
  const auto g = toys::factor_gradients(p, Y);
  auto loss = [&](const core::FactorPair<double>& q) { return toys::half_sq_dist(core::represented(q), Y); };
  for (int which = 0; which < 2; ++which) {
    const Mat<double>& grad = which == 0 ? g.G_A : g.G_B;
    for (core::Index i = 0; i < grad.rows(); ++i)
      for (core::Index j = 0; j < grad.cols(); ++j) {
        auto plus = p, minus = p;
        (which == 0 ? plus.A : plus.B)(i, j) += kFdStep;
        (which == 0 ? minus.A : minus.B)(i, j) -= kFdStep;
        const double fd = (loss(plus) - loss(minus)) / (2 * kFdStep);
        CHECK(std::fabs(fd - grad(i, j)) <= kFdTol * std::max(1.0, std::fabs(fd)));
      }
  }
}

TEST_CASE("factor-matrix: closed forms equal simulations (1e-12 for cond(S) <= 1e4)", "[toys][factor-matrix]") {
  toys::FactorMatrixOptions o;
  o.K_max = 100;
  o.K_points = 5;
  o.K = 100;
  for (std::uint64_t seed : {0u, 1u, 2u}) {
    const auto run = toys::run_factor_matrix(o, seed);
    INFO("seed " << seed);
    CHECK(run.metric("max_rel_err_M_plain") <= kAgree);
    CHECK(run.metric("max_rel_err_M_quotient") <= kAgree);
    // ℓ = ½‖M − Y‖² with ‖M − Y‖ ≈ ε‖M‖: an error δ relative to ‖M‖ is 2δ/ε relative to ℓ.
    CHECK(run.metric("rel_err_loss_plain") <= 2 / o.eps * kAgree);
    CHECK(run.metric("rel_err_loss_quotient") <= 2 / o.eps * kAgree);
  }
}

TEST_CASE("factor-matrix: up to cond(S) = 1e8 the closed forms hold at the representative's round-off",
          "[toys][factor-matrix]") {
  toys::FactorMatrixOptions o;  // default sweep K = 1 .. 1e4
  const auto run = toys::run_factor_matrix(o, 0);
  CHECK(run.metric("max_err_over_roundoff") <= kFloorUnits);
  const auto& floor = run.series_of("roundoff_floor_M");
  const auto& eq = run.series_of("rel_err_M_quotient");
  CHECK(floor.back() > 1e3 * floor.front());  // the floor does grow with K: the check is not vacuous
  CHECK(eq.back() <= kFloorUnits * floor.back());
}

TEST_CASE("factor-matrix: plain GD depends on the representative, the corrected step does not",
          "[toys][factor-matrix]") {
  toys::FactorMatrixOptions o;
  const auto run = toys::run_factor_matrix(o, 3);
  const auto& lp = run.series_of("loss_plain_max");
  const auto& lq_min = run.series_of("loss_quotient_min");
  const auto& lq_max = run.series_of("loss_quotient_max");
  const double before = run.metric("loss_before");
  // Seed 003 §3: ΔM = −η(G·BBᵀ + AAᵀ·G) grows like K² — at K = 1e4 the step overshoots by orders.
  CHECK(lp.back() > 1e6 * before);
  CHECK(lp.front() < before);
  // Corrected: one loss for every gauge, to the round-off of the representative (an M error of
  // kFloorUnits·floor·‖M‖ moves ℓ = ½‖R‖² by at most ‖R‖ times that, twice for max − min), and a
  // descent step. ‖M‖_F = 1 − ε by construction (‖Y‖_F = 1).
  const auto& floor = run.series_of("roundoff_floor_M");
  for (size_t i = 0; i < lq_max.size(); ++i) {
    const double residual = std::sqrt(2 * lq_min[i]);
    CHECK(lq_max[i] - lq_min[i] <= 2 * kFloorUnits * floor[i] * (1 - o.eps) * residual);
    CHECK(lq_max[i] < before);
  }
  CHECK(run.series_of("motion_spread_quotient").front() <= 1e-8);
  CHECK(run.series_of("motion_err_quotient_closed").front() <= 1e-8);
  CHECK(run.series_of("motion_spread_plain").back() > 1e6);
  // The corrected spread over gauges (each gauge's simulated step against the balanced pair's, in units of the step
  // 2ηε) stays at the representative's round-off at every K, as the loss does above; plain GD's is orders above it.
  const auto& spread_q = run.series_of("motion_spread_quotient");
  const auto& spread_p = run.series_of("motion_spread_plain");
  for (size_t i = 0; i < spread_q.size(); ++i) {
    const double floor_motion = floor[i] / (2 * o.eta * o.eps);
    CHECK(spread_q[i] <= kFloorUnits * floor_motion);
    if (i > 0) CHECK(spread_p[i] > 1e3 * kFloorUnits * floor_motion);  // K > 1: plain GD depends on the gauge
  }
}

TEST_CASE("factor-matrix: the corrected closed form depends on M only", "[toys][factor-matrix]") {
  core::Rng rng(11);
  const core::FactorPair<double> p{core::randn<double>(rng, 5, 2), core::randn<double>(rng, 4, 2)};
  const Mat<double> Y = core::randn<double>(rng, 5, 4);
  const Mat<double> M = core::represented(p);
  const Mat<double> cf = toys::factor_quotient_closed_form(M, Y, 2, 1e-2);
  const core::RuleOptions sgd = core::SgdOptions{1e-2, 0.0};
  const core::QuotientOptions q{core::QuotientMode::full, 0.0, core::GramSolve::qr};
  for (double kappa : {1.0, 10.0, 100.0}) {
    const auto moved = core::apply_gauge(p, core::random_gl<double>(rng, 2, kappa));
    core::PairState<double> st;
    const Mat<double> sim = core::represented(toys::factor_step(moved, Y, sgd, sgd, &q, st));
    CHECK(toys::rel_err(sim, cf) <= kAgree);
  }
}
