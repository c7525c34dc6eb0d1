// Gauge draws (core/gauge_sampling.hpp) and permutation helpers: Haar orthogonality, exact condition
// numbers, ranges, reproducibility, and the gather-convention permutation algebra.
// GCC 12 emits false -Wmaybe-uninitialized / -Wuninitialized inside Eigen's AVX-512 kernels (GEMM packing
// and the vectorised log, both through _mm512_undefined_* in avx512fintrin.h) when built with
// -march=native; they are not about this code, so they are silenced here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <map>

#include "core/gauge_sampling.hpp"
#include "core/permutation.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::Index;
using core::Mat;
using core::Vec;

namespace {
constexpr int kDraws = 4000;  // draws for the distributional checks
// Five standard errors: a correct sampler fails such a check with probability ~1e-6 (and the seed is fixed).
constexpr double kSigmas = 5.0;
// Orthogonality / condition numbers of small matrices built in double: a few ulp·r, so 1e-13.
constexpr double kExactTol = 1e-13;

double cond(const Mat<double>& s) {
  const Vec<double> sv = Eigen::JacobiSVD<Mat<double>>(s).singularValues();
  return sv(0) / sv(sv.size() - 1);
}
}  // namespace

TEST_CASE("random_orthogonal is orthogonal and Haar (sign-fixed QR)", "[gauge][sampling]") {
  core::Rng rng(1101);
  const Index r = 3;
  double worst = 0.0, mean00 = 0.0, mean00_sq = 0.0;
  int negative_det = 0;
  for (int k = 0; k < kDraws; ++k) {
    const Mat<double> q = core::random_orthogonal<double>(rng, r);
    worst = std::max(worst, (q.transpose() * q - Mat<double>::Identity(r, r)).norm());
    mean00 += q(0, 0) / kDraws;
    mean00_sq += q(0, 0) * q(0, 0) / kDraws;
    negative_det += q.determinant() < 0.0;
  }
  REQUIRE(worst <= kExactTol);
  // Under Haar measure each entry has mean 0 and second moment 1/r, and det = ±1 with equal odds.
  REQUIRE(std::abs(mean00) <= kSigmas * std::sqrt(1.0 / r / kDraws));
  REQUIRE(std::abs(mean00_sq - 1.0 / r) <= kSigmas * std::sqrt(1.0 / kDraws));
  REQUIRE(std::abs(negative_det / double(kDraws) - 0.5) <= kSigmas * 0.5 / std::sqrt(double(kDraws)));
}

TEST_CASE("random_gl has condition number exactly κ and |det| = 1", "[gauge][sampling]") {
  core::Rng rng(1102);
  for (double kappa : {1.0, 10.0, 1e4}) {
    for (Index r = 2; r <= 6; ++r) {
      for (int k = 0; k < 50; ++k) {
        const Mat<double> s = core::random_gl<double>(rng, r, kappa);
        REQUIRE(cond(s) == Approx(kappa).epsilon(kExactTol * kappa));
        REQUIRE(std::abs(s.determinant()) == Approx(1.0).epsilon(kExactTol * kappa));
      }
    }
  }
  const Mat<double> one = core::random_gl<double>(rng, 1, 100.0);  // r = 1: a scalar in [1/10, 10]
  REQUIRE(std::abs(one(0, 0)) >= 0.1);
  REQUIRE(std::abs(one(0, 0)) <= 10.0);
  REQUIRE_THROWS_AS(core::random_gl<double>(rng, 3, 0.5), std::invalid_argument);
}

TEST_CASE("random_diagonal_kappa is a positive diagonal with condition number exactly κ and det 1", "[gauge][sampling]") {
  core::Rng rng(1105);
  bool order_varies = false;
  for (double kappa : {1.0, 10.0, 1e6}) {
    for (Index r = 2; r <= 6; ++r) {
      Vec<double> first;
      for (int k = 0; k < 50; ++k) {
        const Mat<double> s = core::random_diagonal_kappa<double>(rng, r, kappa);
        REQUIRE(s.isDiagonal(0.0));
        const Vec<double> d = s.diagonal();
        REQUIRE(d.minCoeff() > 0.0);
        REQUIRE(d.maxCoeff() / d.minCoeff() == Approx(kappa).epsilon(kExactTol * kappa));
        REQUIRE(d.prod() == Approx(1.0).epsilon(kExactTol * kappa));
        if (k == 0) first = d;
        order_varies = order_varies || (kappa > 1.0 && d != first);  // the shuffle moves the large entry
      }
    }
  }
  REQUIRE(order_varies);
  REQUIRE_THROWS_AS(core::random_diagonal_kappa<double>(rng, 3, 0.5), std::invalid_argument);
}

TEST_CASE("random_positive_diagonal stays in [e^-a, e^a]", "[gauge][sampling]") {
  core::Rng rng(1103);
  const Vec<double> s = core::random_positive_diagonal<double>(rng, kDraws, 1.5);
  REQUIRE(s.minCoeff() >= std::exp(-1.5));
  REQUIRE(s.maxCoeff() <= std::exp(1.5));
  REQUIRE(s.array().log().mean() == Approx(0.0).margin(kSigmas * 1.5 / std::sqrt(3.0 * kDraws)));
  REQUIRE(core::random_positive_diagonal<double>(rng, 4, 0.0) == Vec<double>::Ones(4));
}

TEST_CASE("near_orthogonal is orthogonal at δ = 0 and well conditioned for small δ", "[gauge][sampling]") {
  core::Rng rng(1104);
  double worst_orth = 0.0, worst_cond = 1.0;
  for (int k = 0; k < 1000; ++k) {
    const Index r = 1 + k % 8;
    const Mat<double> q = core::near_orthogonal<double>(rng, r, 0.0);
    worst_orth = std::max(worst_orth, (q.transpose() * q - Mat<double>::Identity(r, r)).norm());
    worst_cond = std::max(worst_cond, cond(core::near_orthogonal<double>(rng, r, 0.05)));
  }
  REQUIRE(worst_orth <= kExactTol);
  REQUIRE(worst_cond > 1.0);
  REQUIRE(worst_cond <= 1.5);  // ‖G‖₂ ≲ 4 for these sizes → cond ≤ (1 + 0.2)/(1 − 0.2)
}

TEST_CASE("draws are reproducible and float draws are the cast double draws", "[gauge][sampling]") {
  core::Rng a(7), b(7), c(7);
  const Mat<double> d1 = core::random_gl<double>(a, 4, 10.0);
  const Mat<double> d2 = core::random_gl<double>(b, 4, 10.0);
  const Mat<float> f = core::random_gl<float>(c, 4, 10.0);
  REQUIRE(d1 == d2);
  REQUIRE(f == d1.cast<float>());
}

TEST_CASE("random_permutation is uniform over S_3", "[gauge][sampling][permutation]") {
  core::Rng rng(1105);
  std::map<core::Permutation, int> counts;
  const int n = 6000;
  for (int k = 0; k < n; ++k) {
    const core::Permutation p = core::random_permutation(rng, 3);
    REQUIRE(core::is_permutation(p));
    ++counts[p];
  }
  REQUIRE(counts.size() == 6);
  const double sd = std::sqrt(n * (1.0 / 6) * (5.0 / 6));
  for (const auto& [p, c] : counts) REQUIRE(std::abs(c - n / 6.0) <= kSigmas * sd);
}

TEST_CASE("permutation algebra in the gather convention", "[gauge][permutation]") {
  const core::Permutation p{2, 0, 1}, q{1, 2, 0};
  REQUIRE(core::inverse_permutation(p) == q);
  REQUIRE(core::compose_permutations(p, q) == core::identity_permutation(3));
  // Applying p then q to a list: new[j] = old[p[q[j]]].
  const std::array<char, 3> old{'a', 'b', 'c'};
  const core::Permutation pq = core::compose_permutations(p, {0, 2, 1});
  std::array<char, 3> once{}, twice{};
  for (std::size_t j = 0; j < 3; ++j) once[j] = old[static_cast<std::size_t>(p[j])];
  const core::Permutation r{0, 2, 1};
  for (std::size_t j = 0; j < 3; ++j) twice[j] = once[static_cast<std::size_t>(r[j])];
  for (std::size_t j = 0; j < 3; ++j) REQUIRE(twice[j] == old[static_cast<std::size_t>(pq[j])]);
  // Descending argsort, ties in original order.
  REQUIRE(core::argsort_descending({1.0, 3.0, 1.0, 2.0}) == core::Permutation{1, 3, 0, 2});
  REQUIRE_FALSE(core::is_permutation({0, 2}));
  REQUIRE_THROWS_AS(core::inverse_permutation({1, 1}), std::invalid_argument);
}

}  // namespace GAUGELAB_TU
