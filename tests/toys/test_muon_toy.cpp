// muon (seed 003 §6): the 2×2 counterexample's closed forms against the core's Muon step, and the
// seed's statements about shared and independent shrink.
#include <catch2/catch.hpp>

#include <cmath>

#include "toys/muon_toy.hpp"

using namespace gaugelab;

namespace {

// Closed form vs simulation: a few double operations per entry (plus an SVD of a diagonal matrix,
// or five NS5 iterations on it), agreement to a few hundred ulps. The loss is compared relative to
// max(L_after, L_before) (muon_toy.cpp says why).
constexpr double kAgree = 1e-12;
// bf16 keeps 8 significant bits (relative spacing 2^-7 ≈ 0.8 %); five NS5 iterations of rounded
// products stay within a few percent of fp64 (measured ≤ 6.2 %), and rounding must show at all.
constexpr double kBf16MaxDev = 0.15, kBf16MinDev = 1e-4;

}  // namespace

TEST_CASE("muon: closed forms equal the core's Muon step over the K grid", "[toys][muon]") {
  toys::MuonToyOptions o;  // defaults: eta = eps = 1e-3, K up to 1e6, rho 0.99
  const auto run = toys::run_muon_toy(o);
  CHECK(run.metric("max_rel_err_polar") <= kAgree);
  CHECK(run.metric("max_rel_err_ns5") <= kAgree);
  CHECK(run.metric("max_rel_dev_ns5_bf16") <= kBf16MaxDev);
  CHECK(run.metric("max_rel_dev_ns5_bf16") >= kBf16MinDev);
  CHECK(run.series_of("K").size() == o.K_grid.size() * 9);
}

TEST_CASE("muon: with the exact polar factor the step is the seed's A <- rho_A A + eta I", "[toys][muon]") {
  const double eta = 1e-3, eps = 1e-3, K = 1e4;
  const double wd = toys::muon_weight_decay(eta, 0.9), rho = toys::muon_shrink(eta, wd);
  const auto sim = toys::muon_simulated(K, eps, eta, wd, wd, 0);
  // Written out by hand from seed 003 §6: A_after = diag(ρK + η, ρ/K + η), B_after = diag(ρ(1−ε)/K + η, ρ(1−ε)K + η).
  const double m1 = (rho * K + eta) * (rho * (1 - eps) / K + eta);
  const double m2 = (rho / K + eta) * (rho * (1 - eps) * K + eta);
  CHECK(std::fabs(sim.m1 - m1) <= kAgree * m1);
  CHECK(std::fabs(sim.m2 - m2) <= kAgree * m2);
  const auto cf = toys::muon_closed_form(K, eps, eta, rho, rho);
  CHECK(std::fabs(cf.m1 - m1) <= kAgree * m1);
  CHECK(std::fabs(cf.m2 - m2) <= kAgree * m2);
}

TEST_CASE("muon: shared shrink gives L_after = Theta(rho^2 eta^2 K^2) once K >> 1/eta", "[toys][muon]") {
  const double eta = 1e-3, eps = 1e-3;
  for (double rho : {1.0, 0.99, 0.5}) {
    for (double K : {1e5, 1e6}) {
      const double wd = toys::muon_weight_decay(eta, rho);
      const auto sim = toys::muon_simulated(K, eps, eta, wd, wd, 0);
      // m₁ ≈ m₂ ≈ ρηK, so L ≈ (ρηK)²; the neglected terms are O(1/(ρηK)) relative (≤ 2 % here).
      const double scale = rho * eta * K * rho * eta * K;
      INFO("rho " << rho << " K " << K);
      CHECK(sim.loss_after / scale == Approx(1.0).epsilon(4.0 / (rho * eta * K)));
    }
  }
}

TEST_CASE("muon: independent shrink tames only one entry, taming both collapses the retained map", "[toys][muon]") {
  const double eta = 1e-3, eps = 1e-3, K = 1e6;
  const double tuned = 1.0 / (eta * K);
  const double wt = toys::muon_weight_decay(eta, tuned), w1 = toys::muon_weight_decay(eta, 1.0);
  const auto one = toys::muon_simulated(K, eps, eta, wt, w1, 0);
  CHECK(std::fabs(one.m1 - 1.0) < 0.01);  // ρ_A·ηK = 1: entry 1 lands near the target
  CHECK(one.m2 > 0.5 * eta * K);          // entry 2 is driven by ρ_B·ηK with ρ_B = 1: still explodes
  const auto both = toys::muon_simulated(K, eps, eta, wt, wt, 0);
  CHECK(both.loss_after < eps * eps);  // the loss is fine ...
  // ... but the retained part ρ_Aρ_B(1 − ε) of the old map is (ηK)⁻² = 1e-6: the step rebuilt M from
  // the increment alone, so m ≈ 1 only because ρ = 1/(ηK) happened to be tuned to this target.
  const double rho = toys::muon_shrink(eta, wt);
  CHECK(rho * rho * (1 - eps) < 1e-5);
  const double off = 2.0 * tuned;
  const auto detuned = toys::muon_simulated(K, eps, eta, toys::muon_weight_decay(eta, off), toys::muon_weight_decay(eta, off), 0);
  CHECK(detuned.m1 == Approx(2.0).epsilon(0.01));  // twice the shrink, twice the map: nothing of M survives
}

TEST_CASE("muon: NS5's closed form uses the scalar quintic on each singular value", "[toys][muon]") {
  const core::NewtonSchulzOptions ns;
  const auto d = toys::ns5_directions(1e3, 1e-3, ns);
  // For K = 1e3 the large direction has x ≈ 1 and the small one x ≈ 1e-6: NS5 leaves it near 484x.
  CHECK(d.a2 == Approx(core::newton_schulz_scalar(1.0 / (1.0 + 1e-7 / (1e-3 * (1 - 1e-3) * 1e3)), ns)).epsilon(1e-9));
  CHECK(d.a1 < 1e-3);
  CHECK(d.b1 > 0.6);
  CHECK(d.b1 < 1.25);
}
