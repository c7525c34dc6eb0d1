// ReLU gauge coordinates (seed 004 eqs. 7, 13–15): n1 excludes the bias, u = α + β is invariant and
// v = α − β shifts by 2 log s under a rescaling (exact statements for ε = 0, §IV).
// GCC 12 emits a false -Wmaybe-uninitialized inside Eigen's AVX-512 GEMM packing (_mm512_undefined_ps
// in avx512fintrin.h) when built with -march=native; it is not about this code, so it is silenced here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <catch2/catch.hpp>

#include <cmath>

#include "core/coordinates.hpp"
#include "core/gauge_sampling.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::Index;
using core::Vec;

namespace {
// log(s·n) − log(n) − log(s) in double: a few ulp of numbers of size |log n| + |log s| ≲ 10, so 1e-13.
constexpr double kLogTol = 1e-13;
}  // namespace

TEST_CASE("coordinates follow eqs. 7 and 14–15 (bias not in n1)", "[coords][relu]") {
  core::ReluNet<double> net;
  net.W1 = (core::Mat<double>(2, 2) << 3, 4, 0, 2).finished();
  net.b1 = (Vec<double>(2) << 100, -7).finished();  // not part of n1 (seed 004 eq. 7)
  net.W2 = (core::Mat<double>(1, 2) << 1, -3).finished();
  net.b2 = Vec<double>::Zero(1);
  const double eps = 0.5;
  const auto c = core::uv_coordinates(net, eps);
  REQUIRE(c.n1(0) == 5.0);
  REQUIRE(c.n1(1) == 2.0);
  REQUIRE(c.n2(0) == 1.0);
  REQUIRE(c.n2(1) == 3.0);
  REQUIRE(c.alpha(0) == Approx(std::log(5.5)));
  REQUIRE(c.beta(1) == Approx(std::log(3.5)));
  REQUIRE(c.u(0) == Approx(std::log(5.5) + std::log(1.5)));
  REQUIRE(c.v(1) == Approx(std::log(2.5) - std::log(3.5)));
  REQUIRE_THROWS_AS(core::uv_coordinates(net, -1.0), std::invalid_argument);
}

TEST_CASE("u is invariant and v shifts by 2 log s under rescaling (ε = 0)", "[coords][relu]") {
  core::Rng rng(501);
  double worst_u = 0.0, worst_v = 0.0;
  for (int i = 0; i < 1000; ++i) {
    const Index hidden = 2 + i % 10;
    const auto net = test::random_relu_net<double>(rng, 1 + i % 4, hidden, 1 + i % 3);
    const Vec<double> s = core::random_positive_diagonal<double>(rng, hidden, 2.0);
    const auto before = core::uv_coordinates(net, 0.0);
    const auto after = core::uv_coordinates(core::rescale_neurons(net, s), 0.0);
    worst_u = std::max(worst_u, (after.u - before.u).cwiseAbs().maxCoeff());
    const Vec<double> shift = 2.0 * s.array().log().matrix();
    worst_v = std::max(worst_v, (after.v - before.v - shift).cwiseAbs().maxCoeff());
  }
  INFO("worst |Δu| " << worst_u << ", worst |Δv − 2 log s| " << worst_v);
  REQUIRE(worst_u <= kLogTol);
  REQUIRE(worst_v <= kLogTol);
}

TEST_CASE("with ε > 0, u is no longer exactly invariant (why eq. 15 states it for the norms)", "[coords][relu]") {
  // A neuron with small norms: ε is comparable to n, so log(s·n + ε) − log(n + ε) ≠ log s.
  core::ReluNet<double> net;
  net.W1 = core::Mat<double>::Constant(1, 1, 0.01);
  net.b1 = Vec<double>::Zero(1);
  net.W2 = core::Mat<double>::Constant(1, 1, 0.01);
  net.b2 = Vec<double>::Zero(1);
  const auto before = core::uv_coordinates(net, 0.01);
  const auto after = core::uv_coordinates(core::rescale_neurons(net, Vec<double>(Vec<double>::Constant(1, 4.0))), 0.01);
  REQUIRE(std::abs(after.u(0) - before.u(0)) > 0.1);
}

}  // namespace GAUGELAB_TU
