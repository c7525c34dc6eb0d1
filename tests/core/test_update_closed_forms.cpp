// Seed 003 closed forms against simulated update steps: the scalar GD explosion (§2), shared-shrink
// Gram dynamics (§4), the full Gram evolution (§4) and the Hyperball sphere constraint (§5).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using namespace gaugelab::test::update;

namespace {

constexpr int kTrials = 1000;         // random points per property (project floor)
constexpr double kClosedFormTol = 1e-12;  // DESIGN §4: closed form and simulation agree to 1e-12 relative

struct ScalarStep {
  double m_after;
  double f_after;
};

/// One SGD step on the 1×1 factor pair (a, b) for f = ½(ab − 1)², through step_pair/apply_pair.
ScalarStep simulate_scalar(double a, double b, double eta) {
  Mat<double> A(1, 1), B(1, 1);
  A(0, 0) = a;
  B(0, 0) = b;
  const PairIncrement<double> g = mloss_gradients(A, B, Mat<double>(Mat<double>::Ones(1, 1)));
  SgdOptions o;
  o.lr = eta;
  PairState<double> st;
  apply_pair(A, B, step_pair<double>(o, A, B, g.U_A, g.U_B, st));
  const double m = A(0, 0) * B(0, 0);
  return {m, 0.5 * (m - 1) * (m - 1)};
}

/// Seed 003 §2: m_after = ab + ηε(a² + b²) + η²ε²ab and f_after = ½ε²[−1 + η(a² + b²) + η²ε(1 − ε)]²,
/// evaluated in long double with ε = 1 − ab of the actual (a, b).
ScalarStep closed_form_scalar(double a, double b, double eta) {
  const long double la = a, lb = b, le = eta;
  const long double eps = 1.0L - la * lb;
  const long double m = la * lb + le * eps * (la * la + lb * lb) + le * le * eps * eps * la * lb;
  const long double br = -1.0L + le * (la * la + lb * lb) + le * le * eps * (1.0L - eps);
  return {static_cast<double>(m), static_cast<double>(0.5L * eps * eps * br * br)};
}

}  // namespace

TEST_CASE("seed 003 §2 scalar GD: m_after and f_after closed forms vs simulation to 1e-12", "[update][closed-form]") {
  Rng rng(301);
  int accepted = 0, drawn = 0;
  while (accepted < kTrials && drawn < 100 * kTrials) {
    ++drawn;
    const double s = std::pow(10.0, uniform(rng, -3.0, 3.0));
    const double eps = std::pow(10.0, uniform(rng, -3.0, -1.0));
    const double eta = std::pow(10.0, uniform(rng, -4.0, -1.0));
    const double a = s, b = (1 - eps) / s;  // every representative (as, b/s) of m = 1 − ε
    // The loss compares m_after − 1, which cancels when the bracket −1 + η(a² + b²) + … is near 0
    // (the step lands on the target); such draws say nothing about the formula and are skipped.
    if (std::abs(-1 + eta * (a * a + b * b)) < 0.1) continue;
    ++accepted;
    const ScalarStep sim = simulate_scalar(a, b, eta), cf = closed_form_scalar(a, b, eta);
    INFO("a = " << a << ", b = " << b << ", eta = " << eta);
    REQUIRE(std::abs(sim.m_after - cf.m_after) <= kClosedFormTol * std::abs(cf.m_after));
    REQUIRE(std::abs(sim.f_after - cf.f_after) <= kClosedFormTol * cf.f_after);
  }
  REQUIRE(accepted == kTrials);
}

TEST_CASE("seed 003 §2 K = 1e6, eta = eps = 1e-3: loss 5e-7 becomes 4.98e11", "[update][closed-form]") {
  const double K = 1e6, eta = 1e-3, eps = 1e-3;
  const double a = 1 / K, b = (1 - eps) * K;
  CHECK(0.5 * (a * b - 1) * (a * b - 1) == Approx(5e-7).epsilon(1e-10));
  const ScalarStep sim = simulate_scalar(a, b, eta), cf = closed_form_scalar(a, b, eta);
  // Exact value: ε[−1 + η(K⁻² + (1−ε)²K²) + η²ε(1−ε)] = 998000.999000…, so f = ½·998000.999² ≈ 4.98003e11.
  CHECK(std::abs(sim.f_after - cf.f_after) <= kClosedFormTol * cf.f_after);
  CHECK(std::abs(sim.m_after - cf.m_after) <= kClosedFormTol * cf.m_after);
  CHECK(cf.f_after == Approx(0.5 * 998000.999 * 998000.999).epsilon(1e-9));
  CHECK(cf.f_after > 4.97e11);
  CHECK(cf.f_after < 4.99e11);
  // The balanced representative of the same m takes a small, loss-decreasing step.
  const ScalarStep bal = simulate_scalar(1.0, 1 - eps, eta);
  CHECK(bal.f_after < 5e-7);
}

TEST_CASE("seed 003 §4 shared shrink: D_after = rho^2 D, relative imbalance unchanged", "[update][closed-form]") {
  // Shrinking by ρ = 2⁻ᵏ is exact in binary floating point, so the identity holds bit for bit; for
  // general ρ it holds to a few ulps of the Gram entries relative to ‖D‖ (Gaussian factors of
  // different sizes keep ‖D‖ comparable to ‖H_A‖, so 1e-13 has ample margin over ~1e-15 errors).
  constexpr double kGeneralRhoTol = 1e-13;
  Rng rng(302);
  for (int t = 0; t < kTrials; ++t) {
    const Mat<double> A = gaussian<double>(rng, 6, 3), B = gaussian<double>(rng, 4, 3, 2.0);
    const double pow2 = std::ldexp(1.0, -1 - (t % 4));
    const UpdateMatch exact = expect_shared_shrink(A, B, pow2, 0.0);
    INFO(exact.msg);
    REQUIRE(exact.ok);
    const double rho = uniform(rng, 0.5, 1.0);
    const UpdateMatch gen = expect_shared_shrink(A, B, rho, kGeneralRhoTol);
    INFO(gen.msg);
    REQUIRE(gen.ok);
    const auto rel_imbalance = [](const Mat<double>& a, const Mat<double>& b) {
      const Mat<double> ha = a.transpose() * a;
      return (ha - b.transpose() * b).norm() / ha.norm();
    };
    const double before = rel_imbalance(A, B), after = rel_imbalance(Mat<double>(rho * A), Mat<double>(rho * B));
    REQUIRE(std::abs(after - before) <= kGeneralRhoTol * before);
  }
  // Negative: independent shrink ρ_A ≠ ρ_B is not the shared-shrink identity for either ρ.
  Rng rng2(303);
  const Mat<double> A = gaussian<double>(rng2, 6, 3), B = gaussian<double>(rng2, 4, 3);
  const Mat<double> D = A.transpose() * A - B.transpose() * B;
  const Mat<double> D1 = 0.81 * (A.transpose() * A) - 0.25 * (B.transpose() * B);  // ρ_A = 0.9, ρ_B = 0.5
  CHECK(rel_diff(D1, Mat<double>(0.81 * D)) > 0.1);
  CHECK(rel_diff(D1, Mat<double>(0.25 * D)) > 0.1);
}

TEMPLATE_TEST_CASE("seed 003 §4 full Gram evolution formula vs the stepped factor", "[update][closed-form]", double, float) {
  using T = TestType;
  const double tol = std::is_same_v<T, double> ? 1e-13 : 1e-5;  // a few ulps of the Gram entries
  Rng rng(304);
  for (int t = 0; t < kTrials; ++t) {
    const Mat<T> A = gaussian<T>(rng, 5, 3), U = gaussian<T>(rng, 5, 3, 0.3);
    const T rho = static_cast<T>(uniform(rng, 0.5, 1.0));
    const Mat<T> A1 = shrink_plus_increment(A, rho, U);
    REQUIRE(rel_diff(gram_after_step(A, U, rho), Mat<T>(A1.transpose() * A1)) <= tol);
  }
}

TEST_CASE("exact post-step motion = first order + second-order term, with and without shrink", "[update][closed-form]") {
  // (ρ_A A + U_A)(ρ_B B + U_B)ᵀ − ABᵀ = (ρ_Aρ_B − 1)ABᵀ + ρ_A A U_Bᵀ + ρ_B U_A Bᵀ + U_A U_Bᵀ; with ρ = 1
  // this is ΔM_first-order + U_A U_Bᵀ. Compared with the factors actually stepped by apply_pair.
  constexpr double kTol = 1e-13;  // a few ulps of the products, relative to the motion
  Rng rng(307);
  for (int t = 0; t < kTrials; ++t) {
    Mat<double> A = gaussian<double>(rng, 5, 2), B = gaussian<double>(rng, 4, 2);
    const Mat<double> UA = gaussian<double>(rng, 5, 2, 0.1), UB = gaussian<double>(rng, 4, 2, 0.1);
    const double ra = uniform(rng, 0.8, 1.0), rb = uniform(rng, 0.8, 1.0);
    const Mat<double> M0 = A * B.transpose();
    REQUIRE(rel_diff(exact_motion(A, B, UA, UB), Mat<double>(first_order_motion(A, B, UA, UB) + UA * UB.transpose())) <= kTol);
    const Mat<double> want = (ra * rb - 1) * M0 + ra * A * UB.transpose() + rb * UA * B.transpose() + UA * UB.transpose();
    const Mat<double> got = exact_motion(A, B, UA, UB, ra, rb);
    REQUIRE(rel_diff(got, want) <= kTol);
    apply_pair(A, B, PairStep<double>{Step<double>{UA, ra, 0.0}, Step<double>{UB, rb, 0.0}});
    REQUIRE(rel_diff(Mat<double>(A * B.transpose() - M0), got) <= kTol);
  }
}

TEMPLATE_TEST_CASE("seed 003 §5 Hyperball keeps ||W||_F = R to round-off", "[update][hyperball]", double, float) {
  using T = TestType;
  // One retraction rescales by R/‖W+U‖: the result's norm is R up to the rounding of a norm, a
  // division and a scaling (a handful of ulps); 20 steps do not accumulate because each step
  // re-projects.
  const double tol = std::is_same_v<T, double> ? 1e-14 : 5e-6;
  Rng rng(305);
  double worst = 0.0;
  for (int t = 0; t < kTrials / 5; ++t) {
    for (int inner = 0; inner < 5; ++inner) {
      HyperballOptions o;
      o.lr = uniform(rng, 1e-3, 0.3);
      if (inner == 1) o.inner = MomentumOptions{};
      if (inner == 2) o.inner = AdamWOptions{};
      if (inner == 3) o.inner = MuonOptions{};
      if (inner == 4) o.radius = uniform(rng, 0.5, 3.0);  // explicit radius: first step lands on it
      Mat<T> W = gaussian<T>(rng, 4, 3);
      const double R = inner == 4 ? o.radius : static_cast<double>(W.norm());
      RuleState<T> st;
      for (int k = 0; k < 20; ++k) {
        const Step<T> s = propose<T>(o, W, gaussian<T>(rng, 4, 3), st);
        REQUIRE(std::abs(static_cast<double>(s.U.norm()) - o.lr * R) <= tol * 10 * o.lr * R);  // ‖U‖ = ηR
        apply_step(W, s);
        worst = std::max(worst, std::abs(static_cast<double>(W.norm()) - R) / R);
      }
      REQUIRE(st.radius == Approx(R).epsilon(1e-6));
    }
  }
  INFO("worst relative radius error " << worst);
  CHECK(worst <= tol);
}

TEST_CASE("seed 003 §5 decay is normal to the sphere and the retraction formula", "[update][hyperball]") {
  constexpr double kTol = 1e-14;
  Rng rng(306);
  for (int t = 0; t < kTrials; ++t) {
    const Mat<double> W = gaussian<double>(rng, 3, 4), G = gaussian<double>(rng, 3, 4);
    const double lambda = uniform(rng, 0.0, 1.0);
    REQUIRE(sphere_tangent_projection(W, Mat<double>(lambda * W)).norm() <= kTol * lambda * W.norm() + 1e-300);
    const Mat<double> PG = sphere_tangent_projection(W, G);
    REQUIRE(std::abs(PG.cwiseProduct(W).sum()) <= kTol * PG.norm() * W.norm() * 10);
    const double R = W.norm();
    const Mat<double> U = hyperball_increment(G, 0.1, R);
    REQUIRE(rel_diff(U, Mat<double>(-0.1 * R * G / G.norm())) <= kTol);
    REQUIRE(rel_diff(hyperball_retract(W, U, R), Mat<double>(R * (W + U) / (W + U).norm())) <= kTol);
  }
  CHECK(hyperball_increment(Mat<double>(Mat<double>::Zero(2, 2)), 0.1, 1.0).norm() == 0.0);
  Mat<double> W = Mat<double>::Ones(2, 2);
  CHECK_THROWS_AS(apply_step(W, Step<double>{Mat<double>(-W), 1.0, 1.0}), std::domain_error);
}

}  // namespace GAUGELAB_TU
