// noise-wd (seed 002, qualitative proxy): the SGD noise–WD equilibrium against its closed form,
// the √(η/λ) scaling under AdamW, the multiplier chain rule, and the multipliers' escape.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/lrm_gauge.hpp"
#include "core/random.hpp"
#include "toys/noise_wd.hpp"

using namespace gaugelab;
using core::Mat;
using core::Vec;

namespace {

// The equilibrium is a time average of a random process: compare within 5 standard errors (the
// toy logs the SE of the window mean of ‖W‖², from the AR(1) autocorrelation; 5σ ≈ 6e-7 two-sided).
constexpr double kSigmas = 5;
// Exponents fitted over 5 grid points whose norms carry ≈ 2.5 % noise each; the regressors span
// ±log 4, so each exponent has a standard error ≈ 0.02: 0.07 is ≈ 3.5σ.
constexpr double kExponentTol = 0.07;
// Central differences of a polynomial loss (degree 2 in each parameter): see test_factor_matrix.
constexpr double kFdStep = 1e-6, kFdTol = 1e-7;

}  // namespace

TEST_CASE("noise-wd: SGD equilibrium norm matches the closed form within its standard error", "[toys][noise-wd]") {
  toys::NoiseWdOptions o;
  o.target_grid = {};  // the multiplier grid is not under test here
  o.steps = 100;
  const auto run = toys::run_noise_wd(o, 0);
  const auto arr = [&](const std::string& n) {
    for (const auto& [k, v] : run.arrays)
      if (k == n) return v;
    FAIL("no array " << n);
    return std::vector<double>{};
  };
  const auto norm = arr("eq_sgd_norm"), closed = arr("eq_sgd_closed"), se = arr("eq_sgd_se_rel");
  REQUIRE(norm.size() == 1 + 2 * o.grid_factors.size());
  for (size_t i = 0; i < norm.size(); ++i) {
    INFO("grid point " << i << " measured " << norm[i] << " closed " << closed[i] << " se " << se[i]);
    CHECK(std::fabs(norm[i] * norm[i] / (closed[i] * closed[i]) - 1.0) <= kSigmas * se[i]);
  }
  // The scaling law itself: ∝ (η/λ)^½, independent of ηλ, for both rules.
  CHECK(std::fabs(run.metric("sgd_exponent_ratio") - 0.5) <= kExponentTol);
  CHECK(std::fabs(run.metric("sgd_exponent_product")) <= kExponentTol);
  CHECK(std::fabs(run.metric("adamw_exponent_ratio") - 0.5) <= kExponentTol);
  CHECK(std::fabs(run.metric("adamw_exponent_product")) <= kExponentTol);
}

TEST_CASE("noise-wd: the SGD second moment obeys its recursion", "[toys][noise-wd]") {
  // E‖W_{t+1}‖² = ρ²E‖W_t‖² + η²σ²mn for W ← ρW − ηG, G with i.i.d. N(0, σ²) entries.
  const double eta = 0.03, lambda = 0.7, sigma = 1.3, mn = 12, rho = 1 - eta * lambda;
  for (double t : {0.0, 1.0, 10.0, 500.0}) {
    const double next = toys::sgd_noise_second_moment(eta, lambda, sigma, mn, t + 1);
    const double rec = rho * rho * toys::sgd_noise_second_moment(eta, lambda, sigma, mn, t) + eta * eta * sigma * sigma * mn;
    CHECK(next == Approx(rec).epsilon(1e-13));
  }
}

TEST_CASE("noise-wd: multiplier gradients equal finite differences", "[toys][noise-wd]") {
  core::Rng rng(9);
  const Vec<double> r = core::randn_vec<double>(rng, 3), c = core::randn_vec<double>(rng, 4);
  const Mat<double> Wb = core::randn<double>(rng, 3, 4), T = core::randn<double>(rng, 3, 4);
  auto loss = [&](const Vec<double>& rr, const Mat<double>& ww, const Vec<double>& cc) {
    return 0.5 * (core::effective_weight(rr, ww, cc) - T).squaredNorm();
  };
  const auto g = toys::lrm_gradients(r, Wb, c, Mat<double>(core::effective_weight(r, Wb, c) - T));
  auto check = [&](double analytic, double fd) { CHECK(std::fabs(analytic - fd) <= kFdTol * std::max(1.0, std::fabs(fd))); };
  for (int i = 0; i < 3; ++i) {
    Vec<double> p = r, m = r;
    p(i) += kFdStep;
    m(i) -= kFdStep;
    check(g.r(i), (loss(p, Wb, c) - loss(m, Wb, c)) / (2 * kFdStep));
  }
  for (int j = 0; j < 4; ++j) {
    Vec<double> p = c, m = c;
    p(j) += kFdStep;
    m(j) -= kFdStep;
    check(g.c(j), (loss(r, Wb, p) - loss(r, Wb, m)) / (2 * kFdStep));
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      Mat<double> p = Wb, m = Wb;
      p(i, j) += kFdStep;
      m(i, j) -= kFdStep;
      check(g.W(i, j), (loss(r, p, c) - loss(r, m, c)) / (2 * kFdStep));
    }
}

TEST_CASE("noise-wd: multipliers carry the scale while the matrix stays near its equilibrium", "[toys][noise-wd]") {
  // Qualitative (seed 002's claim in a toy): the factors below are wide margins around one fixed
  // seed's outcome, stated so that the opposite behaviour would fail them.
  toys::NoiseWdOptions o;
  o.grid_factors = {};
  o.target_grid = {};
  const auto run = toys::run_noise_wd(o, 0);
  const double eq = run.metric("adamw_eq_estimate"), target = run.metric("target_norm");
  REQUIRE(target < 0.5 * eq);  // the default target sits well below the equilibrium
  // The plain matrix is held above the target by the noise (its norm is noise, not signal) ...
  CHECK(run.metric("plain_norm_final") > 1.2 * target);
  // ... the multiplied matrix W̄ stays at the equilibrium norm (within 30 %) ...
  CHECK(std::fabs(run.metric("scalar_bar_norm_final") / eq - 1.0) < 0.3);
  // ... while the effective matrix follows the target (within 30 %) and fits it better.
  CHECK(std::fabs(run.metric("scalar_eff_norm_final") / target - 1.0) < 0.3);
  CHECK(std::fabs(run.metric("vector_eff_norm_final") / target - 1.0) < 0.3);
  CHECK(run.metric("scalar_loss_final") < 0.5 * run.metric("plain_loss_final"));
  CHECK(run.metric("vector_loss_final") < 0.5 * run.metric("plain_loss_final"));
}
