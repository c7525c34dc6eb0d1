// Seed 003 §3 / §8: the opposite-Gram-corrected GD increment is quotient-compatible and its
// represented motion is representative-independent; plain factor GD is neither. Also the damped and
// diagonal variants, the head-wise QK and VO forms, and the two Gram solves.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/quotient.hpp"
#include "core/gauge_sampling.hpp"
#include "core/update_factor_precond.hpp"
#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using namespace gaugelab::test::update;

namespace {

constexpr int kPoints = 100;          // random (A, B, M*) points ...
constexpr int kGaugesPerPoint = 10;   // ... × gauges each = 1000 gauges per property
constexpr double kMaxKappaDouble = 100.0;  // gauge condition numbers up to 100 (brief)
// Float runs at κ ≤ 10: the moved Gram S⁻¹BᵀBS⁻ᵀ has condition up to κ(S)²κ(B)², and float's
// ε ≈ 6e-8 times (1e2·κ(B)²) still leaves the check meaningful; κ = 100 would make it ~1e-2.
constexpr double kMaxKappaFloat = 10.0;
// Tolerances: the corrected step solves with a Gram of condition ≤ κ(S)²κ(B)² (κ(B) ≲ 10 for the
// 8×3 Gaussian factors used) — error ~ ε_T·1e4·1e2 = 2e-10 in double worst case; 1e-8 leaves margin
// while staying 1e7 below the O(0.1–1) failures of plain GD.
constexpr double kCompatTolDouble = 1e-8;
// Float: ε_float·κ(S)²·κ(B)² ≈ 6e-8·1e2·(1e1–1e2) ≈ 6e-5–6e-4 worst case (measured worst ≈ 4e-5);
// failures of plain GD are O(1).
constexpr double kCompatTolFloat = 1e-3;
// A failing case must be this far off (1e4 × the double tolerance), so "fails" is not a round-off call.
constexpr double kMustFailBy = 1e-4;

template <class T>
struct Point {
  Mat<T> A, B, Mstar;
  std::vector<Mat<T>> gauges;
};

template <class T>
Point<T> make_point(Rng& rng, Index m, Index n, Index r, double max_kappa, bool diagonal_gauges = false) {
  Point<T> p{gaussian<T>(rng, m, r), gaussian<T>(rng, n, r), gaussian<T>(rng, m, n), {}};
  for (int g = 0; g < kGaugesPerPoint; ++g)
    p.gauges.push_back(diagonal_gauges ? sample_diagonal<T>(rng, r, 0.5 * std::log(max_kappa))
                                       : sample_gl<T>(rng, r, uniform(rng, 1.0, max_kappa)));
  return p;
}

/// Plain GD increments for the M-loss: U = −η·G.
template <class T>
auto plain_gd(const Mat<T>& Mstar, double eta) {
  return [Mstar, eta](const Mat<T>& A, const Mat<T>& B) {
    PairIncrement<T> g = mloss_gradients(A, B, Mstar);
    return PairIncrement<T>{static_cast<T>(-eta) * g.U_A, static_cast<T>(-eta) * g.U_B};
  };
}

/// Opposite-Gram-corrected GD increments.
template <class T>
auto corrected_gd(const Mat<T>& Mstar, double eta, QuotientOptions q = {}) {
  return [Mstar, eta, q](const Mat<T>& A, const Mat<T>& B) {
    const PairIncrement<T> u = plain_gd<T>(Mstar, eta)(A, B);
    return opposite_gram_correction(A, B, u, q);
  };
}

}  // namespace

TEMPLATE_TEST_CASE("corrected GD is quotient-compatible and plain GD is not (seed 003 §3)", "[quotient]", double, float) {
  using T = TestType;
  const bool dbl = std::is_same_v<T, double>;
  const double tol = dbl ? kCompatTolDouble : kCompatTolFloat;
  Rng rng(501);
  double worst_corrected = 0.0, least_plain = 1e300;
  for (int p = 0; p < kPoints; ++p) {
    const Point<T> pt = make_point<T>(rng, 8, 7, 3, dbl ? kMaxKappaDouble : kMaxKappaFloat);
    for (GramSolve solve : {GramSolve::cholesky, GramSolve::qr}) {
      QuotientOptions q;
      q.solve = solve;
      const UpdateMatch ok = expect_quotient_compatible(corrected_gd<T>(pt.Mstar, 0.1, q), pt.A, pt.B, pt.gauges, tol);
      INFO(ok.msg);
      REQUIRE(ok.ok);
      worst_corrected = std::max(worst_corrected, ok.worst);
    }
    const UpdateMatch bad = expect_quotient_compatible(plain_gd<T>(pt.Mstar, 0.1), pt.A, pt.B, pt.gauges, tol);
    REQUIRE_FALSE(bad.ok);
    least_plain = std::min(least_plain, bad.worst);
  }
  INFO("worst corrected " << worst_corrected << ", least plain worst " << least_plain);
  CHECK(least_plain > kMustFailBy);
}

TEMPLATE_TEST_CASE("first-order represented motion of corrected GD is independent of the representative",
                   "[quotient]", double, float) {
  using T = TestType;
  const bool dbl = std::is_same_v<T, double>;
  const double tol = dbl ? kCompatTolDouble : kCompatTolFloat;
  Rng rng(502);
  for (int p = 0; p < kPoints; ++p) {
    const Point<T> pt = make_point<T>(rng, 6, 9, 4, dbl ? kMaxKappaDouble : kMaxKappaFloat);
    const UpdateMatch ok = expect_motion_invariant(corrected_gd<T>(pt.Mstar, 0.05), pt.A, pt.B, pt.gauges, tol);
    INFO(ok.msg);
    REQUIRE(ok.ok);
    // Seed 003 §3 "GD Exposes the Representative": ΔM = −η(GBBᵀ + AAᵀG) changes with S.
    const UpdateMatch bad = expect_motion_invariant(plain_gd<T>(pt.Mstar, 0.05), pt.A, pt.B, pt.gauges, tol);
    REQUIRE_FALSE(bad.ok);
    REQUIRE(bad.worst > kMustFailBy);
  }
}

TEST_CASE("damping lambda > 0 and the diagonal approximation are exact only where they should be", "[quotient]") {
  Rng rng(503);
  for (int p = 0; p < kPoints; ++p) {
    // Diagonal approximation: compatible under diagonal gauges (diag(S⁻¹HS⁻¹) = S⁻¹diag(H)S⁻¹) ...
    const Point<double> dpt = make_point<double>(rng, 7, 5, 3, kMaxKappaDouble, /*diagonal_gauges=*/true);
    QuotientOptions diag;
    diag.mode = QuotientMode::diagonal;
    const UpdateMatch d_ok =
        expect_quotient_compatible(corrected_gd<double>(dpt.Mstar, 0.1, diag), dpt.A, dpt.B, dpt.gauges, kCompatTolDouble);
    INFO(d_ok.msg);
    REQUIRE(d_ok.ok);
    // ... but not under general GL gauges.
    const Point<double> gpt = make_point<double>(rng, 7, 5, 3, kMaxKappaDouble);
    const UpdateMatch d_bad =
        expect_quotient_compatible(corrected_gd<double>(gpt.Mstar, 0.1, diag), gpt.A, gpt.B, gpt.gauges, kCompatTolDouble);
    REQUIRE_FALSE(d_bad.ok);
    REQUIRE(d_bad.worst > kMustFailBy);
    // Damping λ comparable to the Gram scale breaks exact compatibility (the price of a bounded solve).
    QuotientOptions damped;
    damped.damping = 1.0;
    const UpdateMatch l_bad =
        expect_quotient_compatible(corrected_gd<double>(gpt.Mstar, 0.1, damped), gpt.A, gpt.B, gpt.gauges, kCompatTolDouble);
    REQUIRE_FALSE(l_bad.ok);
    REQUIRE(l_bad.worst > kMustFailBy);
    // mode none is the identity.
    QuotientOptions none;
    none.mode = QuotientMode::none;
    const PairIncrement<double> u = plain_gd<double>(gpt.Mstar, 0.1)(gpt.A, gpt.B);
    const PairIncrement<double> c = opposite_gram_correction(gpt.A, gpt.B, u, none);
    REQUIRE(rel_diff(c.U_A, u.U_A) == 0.0);
    REQUIRE(rel_diff(c.U_B, u.U_B) == 0.0);
  }
}

TEST_CASE("head-wise QK and VO forms are compatible with (W_Q S, W_K S^-T) and (W_V T, T^-1 W_O)", "[quotient]") {
  const Index d = 10, dh = 4;
  Rng rng(504);
  double worst = 0.0;
  for (int p = 0; p < 1000; ++p) {
    const Mat<double> Wq = gaussian<double>(rng, d, dh), Wk = gaussian<double>(rng, d, dh);
    const Mat<double> Wv = gaussian<double>(rng, d, dh), Wo = gaussian<double>(rng, dh, d);
    const Mat<double> Mqk = gaussian<double>(rng, d, d), Mvo = gaussian<double>(rng, d, d);
    const Mat<double> S = sample_gl<double>(rng, dh, uniform(rng, 1.0, kMaxKappaDouble));
    const Mat<double> Si = S.inverse();
    const auto qk = [&](const Mat<double>& q, const Mat<double>& k) {
      const PairIncrement<double> g = mloss_gradients(q, k, Mqk);
      return correct_qk<double>(q, k, Mat<double>(-0.1 * g.U_A), Mat<double>(-0.1 * g.U_B));
    };
    const auto vo = [&](const Mat<double>& v, const Mat<double>& o) {
      const Mat<double> R = v * o - Mvo;  // ∇_M of ½‖W_V W_O − M*‖²
      return correct_vo<double>(v, o, Mat<double>(-0.1 * R * o.transpose()), Mat<double>(-0.1 * v.transpose() * R));
    };
    const QkIncrement<double> q0 = qk(Wq, Wk), qs = qk(Mat<double>(Wq * S), Mat<double>(Wk * Si.transpose()));
    worst = std::max(worst, rel_diff(qs.U_Q, Mat<double>(q0.U_Q * S)));
    worst = std::max(worst, rel_diff(qs.U_K, Mat<double>(q0.U_K * Si.transpose())));
    const VoIncrement<double> v0 = vo(Wv, Wo), vs = vo(Mat<double>(Wv * S), Mat<double>(Si * Wo));
    worst = std::max(worst, rel_diff(vs.U_V, Mat<double>(v0.U_V * S)));
    worst = std::max(worst, rel_diff(vs.U_O, Mat<double>(Si * v0.U_O)));
    // Represented motion of the VO path: ΔM_VO = Ũ_V W_O + W_V Ũ_O is the same from both.
    const Mat<double> dm0 = v0.U_V * Wo + Wv * v0.U_O;
    const Mat<double> dms = vs.U_V * (Si * Wo) + (Wv * S) * vs.U_O;
    worst = std::max(worst, rel_diff(dms, dm0));
    // The QK form is the factor-pair correction with A = W_Q, B = W_K.
    const PairIncrement<double> g = mloss_gradients(Wq, Wk, Mqk);
    const PairIncrement<double> pair = opposite_gram_correction(Wq, Wk, Mat<double>(-0.1 * g.U_A), Mat<double>(-0.1 * g.U_B));
    REQUIRE(rel_diff(pair.U_A, q0.U_Q) == 0.0);
  }
  INFO("worst " << worst);
  CHECK(worst <= kCompatTolDouble);
}

TEST_CASE("QR solve beats Cholesky of the formed Gram on ill-conditioned float factors", "[quotient]") {
  // κ(F) = 1e3 in float: forming FᵀF squares it to 1e6, so Cholesky's error is ~ε·1e6 ≈ 6e-2 in the
  // worst direction; Householder QR works on F (error ~ε·κ ≈ 6e-5 in the dominant terms). Reference:
  // the same solve in double (its own error ~1e-16·1e6, negligible).
  Rng rng(505);
  std::vector<double> e_chol, e_qr;
  for (int t = 0; t < 1000; ++t) {
    const Index p = 12, r = 4;
    Vec<double> s(r);
    for (Index i = 0; i < r; ++i) s(i) = std::pow(1e3, -double(i) / double(r - 1));
    const Mat<double> Fd = sample_orthogonal<double>(rng, p).leftCols(r) * s.asDiagonal() * sample_orthogonal<double>(rng, r);
    const Mat<double> Ud = gaussian<double>(rng, 5, r);
    const Mat<float> F = Fd.cast<float>(), U = Ud.cast<float>();
    const Mat<double> ref_f = right_gram_solve(U.cast<double>().eval(), F.cast<double>().eval(), 0.0, GramSolve::qr);
    e_qr.push_back(rel_diff(right_gram_solve(U, F, 0.0, GramSolve::qr).cast<double>().eval(), ref_f));
    try {
      e_chol.push_back(rel_diff(right_gram_solve(U, F, 0.0, GramSolve::cholesky).cast<double>().eval(), ref_f));
    } catch (const std::domain_error&) {
      e_chol.push_back(1.0);  // factorisation failed: counts as total loss of accuracy
    }
  }
  std::sort(e_qr.begin(), e_qr.end());
  std::sort(e_chol.begin(), e_chol.end());
  const double med_qr = e_qr[e_qr.size() / 2], med_chol = e_chol[e_chol.size() / 2];
  INFO("median relative error: qr " << med_qr << ", cholesky " << med_chol);
  CHECK(med_qr * 100 < med_chol);  // measured: ~6e-6 vs ~6e-3
  // In double both agree closely for the same well-posed problem.
  const Mat<double> F = gaussian<double>(rng, 9, 3), U = gaussian<double>(rng, 4, 3);
  CHECK(rel_diff(right_gram_solve(U, F, 0.5, GramSolve::qr), right_gram_solve(U, F, 0.5, GramSolve::cholesky)) <= 1e-13);
  // Rank-deficient factor without damping: reported, not silently wrong.
  Mat<double> Fr = gaussian<double>(rng, 6, 3);
  Fr.col(2) = Fr.col(0);
  CHECK_THROWS_AS(right_gram_solve(U, Fr, 0.0, GramSolve::cholesky), std::domain_error);
  CHECK_NOTHROW(right_gram_solve(U, Fr, 1e-3, GramSolve::cholesky));
  CHECK_THROWS_AS(right_diag_gram_solve(U, Mat<double>(Mat<double>::Zero(4, 3)), 0.0), std::domain_error);
  CHECK_THROWS_AS(right_gram_solve(U, gaussian<double>(rng, 6, 2), 0.0), std::invalid_argument);
}

TEST_CASE("periodic full correction: full on t = 0 mod k, the between-mode otherwise", "[quotient]") {
  PeriodicQuotientOptions po;
  po.every = 3;
  po.full.damping = 0.25;
  PeriodicQuotient sched(po);
  for (long long t = 0; t < 1000; ++t) {
    const QuotientOptions q = sched.next();
    REQUIRE(q.mode == (t % 3 == 0 ? QuotientMode::full : QuotientMode::diagonal));
    REQUIRE(q.damping == 0.25);
  }
  CHECK(sched.step() == 1000);
  po.between = QuotientMode::none;
  PeriodicQuotient s2(po);
  s2.set_step(7);
  CHECK(s2.next().mode == QuotientMode::none);
  CHECK(s2.next().mode == QuotientMode::none);
  CHECK(s2.next().mode == QuotientMode::full);  // t = 9
  po.every = 0;
  CHECK_THROWS_AS(PeriodicQuotient(po), std::invalid_argument);
  // The options it hands out drive the same correction as a direct call.
  Rng rng(506);
  const Mat<double> A = gaussian<double>(rng, 5, 2), B = gaussian<double>(rng, 4, 2);
  const Mat<double> UA = gaussian<double>(rng, 5, 2), UB = gaussian<double>(rng, 4, 2);
  PeriodicQuotientOptions p1;
  p1.every = 2;
  PeriodicQuotient s3(p1);
  const PairIncrement<double> full = opposite_gram_correction(A, B, UA, UB, s3.next());
  const PairIncrement<double> dg = opposite_gram_correction(A, B, UA, UB, s3.next());
  CHECK(rel_diff(full.U_A, right_gram_solve(UA, B, 0.0)) <= 1e-15);
  CHECK(rel_diff(dg.U_A, right_diag_gram_solve(UA, B, 0.0)) <= 1e-15);
  for (QuotientMode m : {QuotientMode::none, QuotientMode::diagonal, QuotientMode::full})
    CHECK(parse_quotient_mode(quotient_mode_name(m)) == m);
  CHECK_THROWS_WITH(parse_quotient_mode("half"), Catch::Contains("half"));
  CHECK(parse_gram_solve("qr") == GramSolve::qr);
  CHECK_THROWS_AS(parse_gram_solve("lu"), std::invalid_argument);
}

// The literature's factor-pair preconditioners (core/update_factor_precond.hpp), each against its stated
// invariance at 100 random points × a κ = 100 general gauge, gradients moved as covectors (∇_{AS} = ∇_A S⁻ᵀ,
// ∇_{BS⁻ᵀ} = ∇_B S): ScaledGD's represented motion is the same from every representative (kCompatTolDouble)
// and is the undamped opposite-Gram correction exactly; the Riemannian-preconditioned form with δ = 0 is
// ScaledGD, and with δ = 0.1 (of O(1–10) Gram eigenvalues, pushed down to O(0.1) by the gauge) it is not
// invariant (off by more than kMustFailBy).
TEST_CASE("literature rules: ScaledGD is GL(r)-invariant, Riemannian preconditioning only for small delta",
          "[quotient][literature]") {
  Rng rng(2024);
  double worst_scaled = 0, least_damped = 1e300;
  for (int i = 0; i < kPoints; ++i) {
    const Mat<double> A = randn<double>(rng, 8, 3), B = randn<double>(rng, 6, 3);
    const Mat<double> GA = randn<double>(rng, 8, 3), GB = randn<double>(rng, 6, 3);
    const Mat<double> S = random_gl<double>(rng, 3, kMaxKappaDouble);
    const Mat<double> S_inv_t = S.inverse().transpose();
    const Mat<double> A2 = A * S, B2 = B * S_inv_t, GA2 = GA * S_inv_t, GB2 = GB * S;
    auto motion = [](const Mat<double>& a, const Mat<double>& b, const PairIncrement<double>& u) -> Mat<double> {
      return u.U_A * b.transpose() + a * u.U_B.transpose();
    };
    const auto ref = scaled_gd<double>(A, B, -GA, -GB);
    const auto moved = scaled_gd<double>(A2, B2, -GA2, -GB2);
    const Mat<double> m0 = motion(A, B, ref);
    worst_scaled = std::max(worst_scaled, (motion(A2, B2, moved) - m0).norm() / m0.norm());
    const auto gram = opposite_gram_correction<double>(A, B, -GA, -GB, QuotientOptions{QuotientMode::full, 0.0});
    CHECK((ref.U_A - gram.U_A).norm() == 0.0);
    CHECK((ref.U_B - gram.U_B).norm() == 0.0);
    const auto rp0 = riemannian_preconditioned<double>(A, B, -GA, -GB, 0.0);
    CHECK((rp0.U_A - ref.U_A).norm() == 0.0);
    const auto rp = riemannian_preconditioned<double>(A, B, -GA, -GB, 0.1);
    const auto rp_moved = riemannian_preconditioned<double>(A2, B2, -GA2, -GB2, 0.1);
    const Mat<double> r0 = motion(A, B, rp);
    least_damped = std::min(least_damped, (motion(A2, B2, rp_moved) - r0).norm() / r0.norm());
  }
  INFO("ScaledGD worst relative motion difference " << worst_scaled << "; damped least " << least_damped);
  CHECK(worst_scaled <= kCompatTolDouble);
  CHECK(least_damped >= kMustFailBy);
  CHECK_THROWS_AS(riemannian_preconditioned<double>(Mat<double>::Ones(2, 1), Mat<double>::Ones(2, 1),
                                                    Mat<double>::Ones(2, 1), Mat<double>::Ones(2, 1), -1.0),
                  std::invalid_argument);
}

}  // namespace GAUGELAB_TU
