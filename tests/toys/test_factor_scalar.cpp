// factor-scalar (seed 003 §2): closed forms against the core's simulated step, the seed's numbers,
// the threshold η(a² + b²) = 2, and the representative-independence of the corrected step.
#include <catch2/catch.hpp>

#include <cmath>

#include "toys/factor_scalar.hpp"

using namespace gaugelab;

namespace {

// "Closed forms = simulations" (DESIGN tier 1): both sides are a handful of double operations on
// O(1)..O(1e12) numbers without cancellation, so they agree to a few hundred ulps at most.
constexpr double kAgree = 1e-12;
// The seed's headline: f_after ≈ 4.98e11 (½ε²(ηK²(1 − ε)²)² = 4.98003e11); three digits as stated.
constexpr double kSeedDigits = 1e-3;

}  // namespace

TEST_CASE("factor-scalar: seed 003 §2 example, eta = eps = 1e-3, K = 1e6", "[toys][factor-scalar]") {
  const double eta = 1e-3, eps = 1e-3, K = 1e6;
  const double a = 1.0 / K, b = (1.0 - eps) * K;
  const auto cf = toys::scalar_gd_closed_form(a, b, eta, eps);
  const auto sim = toys::scalar_gd_simulated(a, b, eta, false);
  INFO("closed " << cf.loss_after << " sim " << sim.loss_after);
  CHECK(std::fabs(sim.loss_after - cf.loss_after) <= kAgree * cf.loss_after);
  CHECK(std::fabs(sim.m_after - cf.m_after) <= kAgree * cf.m_after);
  CHECK(std::fabs(cf.loss_after / 4.98e11 - 1.0) <= kSeedDigits);
  // "changes m by about ηεK² = 1e6"
  CHECK(std::fabs((sim.m_after - (1.0 - eps)) / (eta * eps * K * K) - 1.0) <= 3 * eps);

  // The balanced representative of the same product takes a small step that lowers the loss.
  const double s = std::sqrt(1.0 - eps);
  const auto bal = toys::scalar_gd_simulated(s, s, eta, false);
  const auto bal_cf = toys::scalar_gd_closed_form(s, s, eta, eps);
  CHECK(std::fabs(bal.loss_after - bal_cf.loss_after) <= kAgree * bal_cf.loss_after);
  CHECK(bal.loss_after < 0.5 * eps * eps);
}

TEST_CASE("factor-scalar: closed form equals simulation over the whole K sweep", "[toys][factor-scalar]") {
  toys::FactorScalarOptions o;  // defaults: the seed's eta, eps, K and a 121-point sweep up to 1e6
  const auto run = toys::run_factor_scalar(o);
  CHECK(run.metric("max_rel_err_m") <= kAgree);
  CHECK(run.metric("max_rel_err_loss") <= kAgree);
  CHECK(run.metric("loss_before") == 0.5 * o.eps * o.eps);
  const auto& K = run.series_of("K");
  REQUIRE(K.size() == static_cast<size_t>(o.K_points));
  CHECK(K.front() == o.K_min);
  CHECK(K.back() == o.K_max);
}

TEST_CASE("factor-scalar: the loss falls below the threshold eta(a^2+b^2) = 2 and rises above it",
          "[toys][factor-scalar]") {
  for (double eta : {1e-3, 1e-2}) {
    const double eps = 1e-3;
    const double k_exact = toys::scalar_threshold_K(eta, eps, 2.0 - eta * eta * eps * (1.0 - eps));
    const double k_seed = toys::scalar_threshold_K(eta, eps, 2.0);
    REQUIRE(std::isfinite(k_exact));
    // The seed's "approximately η(a² + b²) < 2" differs from the exact threshold by O(η²ε).
    CHECK(std::fabs(k_seed / k_exact - 1.0) <= eta * eta * eps);
    auto f_after = [&](double K) { return toys::scalar_gd_simulated(1.0 / K, (1.0 - eps) * K, eta, false).loss_after; };
    const double f_before = 0.5 * eps * eps;
    // 1e-4 relative on either side moves f_after by ≈ 4e-4·f_before, far above its round-off.
    CHECK(f_after(k_exact * (1.0 - 1e-4)) < f_before);
    CHECK(f_after(k_exact * (1.0 + 1e-4)) > f_before);
  }
}

TEST_CASE("factor-scalar: the opposite-Gram corrected step is the same from every representative",
          "[toys][factor-scalar]") {
  const double eta = 1e-3, eps = 1e-3;
  const auto cf = toys::scalar_quotient_closed_form(1.0, 1.0 - eps, eta, eps);
  for (double K : {1.0, 10.0, 1e3, 1e6}) {
    const auto sim = toys::scalar_gd_simulated(1.0 / K, (1.0 - eps) * K, eta, true);
    INFO("K " << K);
    CHECK(std::fabs(sim.m_after - cf.m_after) <= kAgree * cf.m_after);
    CHECK(std::fabs(sim.loss_after - cf.loss_after) <= kAgree * cf.loss_after);
  }
  // And it decreases the loss: ε(1 − 2η) < ε.
  CHECK(cf.loss_after < 0.5 * eps * eps);
}
