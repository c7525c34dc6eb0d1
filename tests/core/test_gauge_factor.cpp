// Factor gauge (A, B) ~ (A S, B S⁻ᵀ) (seed 003 §1): invariance of M = A Bᵀ, group laws, the inverse
// action, and a deliberately wrong gauge (S instead of S⁻ᵀ on B) that the invariance matcher must catch.
// GCC 12 emits a false -Wmaybe-uninitialized inside Eigen's AVX-512 GEMM packing (_mm512_undefined_ps
// in avx512fintrin.h) when built with -march=native; it is not about this code, so it is silenced here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <catch2/catch.hpp>

#include "core/factor_gauge.hpp"
#include "core/gauge_sampling.hpp"
#include "support/gauge_matchers.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::FactorPair;
using core::Index;
using core::Mat;
using test::MatchResult;

namespace {

constexpr int kPoints = 100;          // random factor pairs per test
constexpr int kGaugesPerPoint = 10;   // gauges per pair: 100 × 10 = 1000 gauge samples

/// Shapes cycle through r = 1..5 and m, n in [r, r + 4] (tall, square and r = 1 edge cases).
template <class T>
FactorPair<T> point(core::Rng& rng, int i) {
  const Index r = 1 + i % 5;
  return test::random_factor_pair<T>(rng, r + (i % 3) * 2, r + (i % 4), r);
}

template <class T>
MatchResult invariance_sweep(std::uint64_t seed, double tol) {
  core::Rng rng(seed);
  MatchResult total;
  for (int i = 0; i < kPoints; ++i) {
    const FactorPair<T> p = point<T>(rng, i);
    const Index r = p.rank();
    total.merge(test::expect_function_invariant(
        [](const FactorPair<T>& q) { return core::represented(q); }, p,
        [r](core::Rng& g) { return core::random_gl<T>(g, r, test::kTestKappa); },
        [](const FactorPair<T>& q, const Mat<T>& s) { return core::apply_gauge(q, s); }, kGaugesPerPoint, rng, tol));
  }
  return total;
}

}  // namespace

TEST_CASE("factor gauge preserves A·Bᵀ (double)", "[gauge][factor]") {
  GAUGE_REQUIRE(invariance_sweep<double>(101, test::kDoubleGaugeTol));
}

TEST_CASE("factor gauge preserves A·Bᵀ (float)", "[gauge][factor][float]") {
  GAUGE_REQUIRE(invariance_sweep<float>(102, test::kFloatGaugeTol));
}

TEST_CASE("factor gauge obeys the group laws of a right action", "[gauge][factor]") {
  core::Rng rng(103);
  MatchResult total;
  for (int i = 0; i < kPoints; ++i) {
    const FactorPair<double> p = point<double>(rng, i);
    const Index r = p.rank();
    total.merge(test::expect_group_laws(
        p, [r](core::Rng& g) { return core::random_gl<double>(g, r, test::kTestKappa); },
        [](const FactorPair<double>& q, const Mat<double>& s) { return core::apply_gauge(q, s); },
        // (A S₁) S₂ = A (S₁S₂) and B S₁⁻ᵀ S₂⁻ᵀ = B (S₁S₂)⁻ᵀ: "S₁ first, then S₂" composes to S₁·S₂.
        [](const Mat<double>& g, const Mat<double>& k) -> Mat<double> { return g * k; },
        [](const Mat<double>& g) -> Mat<double> { return g.inverse(); }, Mat<double>::Identity(r, r), kGaugesPerPoint,
        rng, test::kDoubleGaugeTol));
  }
  GAUGE_REQUIRE(total);
}

TEST_CASE("apply_gauge_inverse undoes apply_gauge", "[gauge][factor]") {
  core::Rng rng(104);
  test::ParamDistance dist;
  double worst = 0.0;
  for (int i = 0; i < 1000; ++i) {
    const FactorPair<double> p = point<double>(rng, i);
    const Mat<double> s = core::random_gl<double>(rng, p.rank(), test::kTestKappa);
    worst = std::max(worst, dist(core::apply_gauge_inverse(core::apply_gauge(p, s), s), p));
    worst = std::max(worst, dist(core::apply_gauge(core::apply_gauge_inverse(p, s), s), p));
  }
  REQUIRE(worst <= test::kDoubleGaugeTol);
}

TEST_CASE("a wrong factor gauge (S on B instead of S⁻ᵀ) is caught by the invariance matcher", "[gauge][factor][negative]") {
  core::Rng rng(105);
  for (int i = 0; i < 20; ++i) {
    const FactorPair<double> p = point<double>(rng, i);
    const Index r = p.rank();
    const MatchResult wrong = test::expect_function_invariant(
        [](const FactorPair<double>& q) { return core::represented(q); }, p,
        [r](core::Rng& g) { return core::random_gl<double>(g, r, test::kTestKappa); },
        [](const FactorPair<double>& q, const Mat<double>& s) { return FactorPair<double>{q.A * s, q.B * s}; },
        kGaugesPerPoint, rng, test::kDoubleGaugeTol);
    INFO(wrong.msg);
    REQUIRE_FALSE(wrong.ok);
    REQUIRE(wrong.worst > 1e-2);  // not a near miss: the wrong action changes M at order one
  }
}

TEST_CASE("factor gauge rejects mismatched shapes", "[gauge][factor]") {
  core::Rng rng(106);
  const FactorPair<double> p = test::random_factor_pair<double>(rng, 4, 3, 2);
  REQUIRE_THROWS_AS(core::apply_gauge(p, Mat<double>(Mat<double>::Identity(3, 3))), std::invalid_argument);
  const FactorPair<double> bad{Mat<double>::Ones(4, 2), Mat<double>::Ones(3, 3)};
  REQUIRE_THROWS_AS(core::represented(bad), std::invalid_argument);
}

}  // namespace GAUGELAB_TU
