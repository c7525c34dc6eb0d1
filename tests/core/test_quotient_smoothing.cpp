// Seed 003 §7 random gauge smoothing: orthogonal smoothing leaves (orthogonally equivariant) plain GD
// unchanged, GL smoothing does not make the represented motion representative-independent, and the
// pull-back formulas are checked on an already-compatible update and on the scalar formula.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "core/quotient.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using namespace gaugelab::test::update;

namespace {

constexpr int kPoints = 100;      // random (A, B, M*) points ...
constexpr int kSamples = 10;      // ... × smoothing gauges each = 1000 gauges per property
constexpr double kEta = 0.1;
// Orthogonal smoothing of GD and GL smoothing of corrected GD reproduce the unsmoothed increment up
// to the round-off of N products/solves with well-conditioned gauges (κ ≤ 10): ~1e-14; 1e-11 margin.
constexpr double kRoundOffTol = 1e-11;

auto plain_gd(const Mat<double>& Mstar) {
  return [Mstar](const Mat<double>& A, const Mat<double>& B) {
    PairIncrement<double> g = mloss_gradients(A, B, Mstar);
    return PairIncrement<double>{-kEta * g.U_A, -kEta * g.U_B};
  };
}

}  // namespace

TEST_CASE("smoothing plain GD over orthogonal gauges changes nothing", "[quotient][smoothing]") {
  // U_A(AQ, BQ)Q⁻¹ = −η·G·BQ·Qᵀ = U_A(A, B) for every orthogonal Q: each term already equals U.
  Rng rng(601);
  double worst = 0.0;
  for (int p = 0; p < kPoints; ++p) {
    const Mat<double> A = gaussian<double>(rng, 6, 3), B = gaussian<double>(rng, 5, 3), M = gaussian<double>(rng, 6, 5);
    std::vector<Mat<double>> qs;
    for (int i = 0; i < kSamples; ++i) qs.push_back(sample_orthogonal<double>(rng, 3));
    const PairIncrement<double> u = plain_gd(M)(A, B);
    const PairIncrement<double> s = smooth_over_gauges<double>(plain_gd(M), A, B, qs);
    worst = std::max({worst, rel_diff(s.U_A, u.U_A), rel_diff(s.U_B, u.U_B)});
  }
  INFO("worst " << worst);
  CHECK(worst <= kRoundOffTol);
}

TEST_CASE("smoothing a compatible update over GL gauges returns it (pull-back formulas)", "[quotient][smoothing]") {
  Rng rng(602);
  double worst = 0.0;
  for (int p = 0; p < kPoints; ++p) {
    const Mat<double> A = gaussian<double>(rng, 6, 3), B = gaussian<double>(rng, 5, 3), M = gaussian<double>(rng, 6, 5);
    std::vector<Mat<double>> gs;
    for (int i = 0; i < kSamples; ++i) gs.push_back(sample_gl<double>(rng, 3, 10.0));
    const auto corrected = [&](const Mat<double>& a, const Mat<double>& b) {
      return opposite_gram_correction(a, b, plain_gd(M)(a, b));
    };
    const PairIncrement<double> u = corrected(A, B);
    const PairIncrement<double> s = smooth_over_gauges<double>(corrected, A, B, gs);
    worst = std::max({worst, rel_diff(s.U_A, u.U_A), rel_diff(s.U_B, u.U_B)});
  }
  INFO("worst " << worst);
  CHECK(worst <= kRoundOffTol);
  const Mat<double> A = gaussian<double>(rng, 4, 2), B = gaussian<double>(rng, 3, 2);
  CHECK_THROWS_AS(smooth_over_gauges<double>(plain_gd(gaussian<double>(rng, 4, 3)), A, B, {}), std::invalid_argument);
  CHECK_THROWS_AS(smooth_over_gauges<double>(plain_gd(gaussian<double>(rng, 4, 3)), A, B,
                                             {Mat<double>(Mat<double>::Zero(2, 2))}),
                  std::invalid_argument);
}

TEST_CASE("GL smoothing of plain GD leaves the represented motion representative-dependent", "[quotient][smoothing]") {
  // The smoothed ΔM from (AS, BS⁻ᵀ) (same N = 10 sampling gauges, κ = 10) vs from (A, B), over 1000
  // representatives S (κ ≤ 100). GL is noncompact, so the spread stays O(0.1–1): far above round-off.
  constexpr double kSpreadFloor = 1e-2;  // 1e9 × round-off; the measured spread is orders larger
  Rng rng(603);
  std::vector<double> spread;
  for (int p = 0; p < kPoints; ++p) {
    const Mat<double> A = gaussian<double>(rng, 6, 3), B = gaussian<double>(rng, 5, 3), M = gaussian<double>(rng, 6, 5);
    std::vector<Mat<double>> smoothing, reps;
    for (int i = 0; i < kSamples; ++i) smoothing.push_back(sample_gl<double>(rng, 3, 10.0));
    for (int i = 0; i < kSamples; ++i) reps.push_back(sample_gl<double>(rng, 3, uniform(rng, 2.0, 100.0)));
    const auto smoothed = [&](const Mat<double>& a, const Mat<double>& b) {
      return smooth_over_gauges<double>(plain_gd(M), a, b, smoothing);
    };
    const UpdateMatch r = expect_motion_invariant(smoothed, A, B, reps, kRoundOffTol);
    REQUIRE_FALSE(r.ok);
    spread.push_back(r.worst);
  }
  std::sort(spread.begin(), spread.end());
  INFO("spread min " << spread.front() << ", median " << spread[spread.size() / 2]);
  CHECK(spread.front() > kSpreadFloor);
}

TEST_CASE("seed 003 §7 scalar: smoothed motion = eta*eps*(a^2 mean(s^2) + b^2 mean(s^-2))", "[quotient][smoothing]") {
  // ε = 1 − ab is re-formed from rounded products at every representative: an absolute error of a
  // few ulps of 1, i.e. ≲ 1e-14 relative for ε ≥ 1e-2; the sum of N positive terms adds a few ulps.
  constexpr double kTol = 1e-12;
  Rng rng(604);
  for (int t = 0; t < 1000; ++t) {
    const double a = std::exp(uniform(rng, -2.0, 2.0)), eps = uniform(rng, 1e-2, 0.1), b = (1 - eps) / a;
    Mat<double> A(1, 1), B(1, 1);
    A(0, 0) = a;
    B(0, 0) = b;
    std::vector<Mat<double>> gs;
    double es2 = 0.0, esm2 = 0.0;
    for (int i = 0; i < kSamples; ++i) {
      const double s = std::exp(uniform(rng, -1.5, 1.5));
      gs.push_back(Mat<double>::Constant(1, 1, s));
      es2 += s * s / kSamples;
      esm2 += 1.0 / (s * s * kSamples);
    }
    const PairIncrement<double> u = smooth_over_gauges<double>(plain_gd(Mat<double>::Ones(1, 1)), A, B, gs);
    const double dm = first_order_motion(A, B, u.U_A, u.U_B)(0, 0);
    const double e = 1 - a * b;  // ε of the actual (a, b)
    const double want = kEta * e * (a * a * es2 + b * b * esm2);
    REQUIRE(std::abs(dm - want) <= kTol * want);
  }
}

}  // namespace GAUGELAB_TU
