// Update-rule mechanics against hand-written reference formulas (torch.optim.SGD / AdamW semantics),
// the runtime rule dispatcher, decoupled weight decay, and the bfloat16 rounding helper.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using gaugelab::test::update::gaussian;
using gaugelab::test::update::rel_diff;

namespace {

constexpr int kTrials = 1000;  // random points per property (project floor)
// The rules and their references perform the same few floating-point operations in a possibly
// different order: a few ulps of double.
constexpr double kSameFormulaTolDouble = 1e-14;
constexpr double kSameFormulaTolFloat = 1e-6;  // a few ulps of float

template <class T>
double same_formula_tol() {
  return std::is_same_v<T, double> ? kSameFormulaTolDouble : kSameFormulaTolFloat;
}

}  // namespace

TEMPLATE_TEST_CASE("sgd: U = -lr*G and the decoupled shrink rho = 1 - lr*wd", "[update]", double, float) {
  using T = TestType;
  Rng rng(101);
  for (int t = 0; t < kTrials; ++t) {
    const Mat<T> W = gaussian<T>(rng, 4, 3), G = gaussian<T>(rng, 4, 3);
    SgdOptions o;
    o.lr = uniform(rng, 1e-3, 1e-1);
    o.weight_decay = uniform(rng, 0.0, 1.0);
    RuleState<T> st;
    const Step<T> s = sgd_step(o, W, G, st);
    REQUIRE(rel_diff(s.U, Mat<T>(static_cast<T>(-o.lr) * G)) <= same_formula_tol<T>());
    REQUIRE(std::abs(static_cast<double>(s.rho) - (1.0 - o.lr * o.weight_decay)) <= same_formula_tol<T>());
    Mat<T> W1 = W;
    apply_step(W1, s);
    REQUIRE(rel_diff(W1, Mat<T>(s.rho * W - static_cast<T>(o.lr) * G)) <= same_formula_tol<T>());
  }
}

TEMPLATE_TEST_CASE("momentum matches torch.optim.SGD (heavy-ball and Nesterov, dampening)", "[update]", double, float) {
  using T = TestType;
  Rng rng(102);
  for (int t = 0; t < kTrials; ++t) {
    MomentumOptions o;
    o.lr = uniform(rng, 1e-3, 1e-1);
    o.momentum = uniform(rng, 0.0, 0.99);
    o.dampening = (t % 3 == 0) ? uniform(rng, 0.0, 0.5) : 0.0;
    o.nesterov = (t % 2 == 0);
    const Mat<T> W = gaussian<T>(rng, 3, 5);
    RuleState<T> st;
    Mat<T> buf;
    for (int k = 0; k < 4; ++k) {
      const Mat<T> G = gaussian<T>(rng, 3, 5);
      const Step<T> s = momentum_step(o, W, G, st);
      buf = (k == 0) ? G : Mat<T>(static_cast<T>(o.momentum) * buf + static_cast<T>(1.0 - o.dampening) * G);
      const Mat<T> g = o.nesterov ? Mat<T>(G + static_cast<T>(o.momentum) * buf) : buf;
      REQUIRE(rel_diff(s.U, Mat<T>(static_cast<T>(-o.lr) * g)) <= same_formula_tol<T>());
      REQUIRE(s.rho == T(1));
    }
    REQUIRE(st.step == 4);
  }
}

TEMPLATE_TEST_CASE("adamw matches torch.optim.AdamW including the decay order", "[update]", double, float) {
  using T = TestType;
  Rng rng(103);
  for (int t = 0; t < kTrials; ++t) {
    AdamWOptions o;
    o.lr = uniform(rng, 1e-4, 1e-2);
    o.beta1 = uniform(rng, 0.5, 0.95);
    o.beta2 = uniform(rng, 0.9, 0.999);
    o.weight_decay = uniform(rng, 0.0, 0.2);
    o.bias_correction = (t % 4 != 0);
    Mat<T> W = gaussian<T>(rng, 4, 4), Wref = W;
    RuleState<T> st;
    Mat<double> m = Mat<double>::Zero(4, 4), v = Mat<double>::Zero(4, 4);
    for (int k = 1; k <= 3; ++k) {
      const Mat<T> G = gaussian<T>(rng, 4, 4);
      const Mat<double> g = G.template cast<double>();
      apply_step(W, adamw_step(o, W, G, st));
      // torch: p.mul_(1 - lr*wd); exp_avg.lerp_; exp_avg_sq.mul_.addcmul_; p.addcdiv_(m, denom, -step_size)
      m = o.beta1 * m + (1 - o.beta1) * g;
      v = o.beta2 * v + (1 - o.beta2) * g.cwiseProduct(g);
      const double bc1 = o.bias_correction ? 1 - std::pow(o.beta1, k) : 1.0;
      const double bc2 = o.bias_correction ? 1 - std::pow(o.beta2, k) : 1.0;
      Mat<double> wd = Wref.template cast<double>() * (1 - o.lr * o.weight_decay);
      wd -= (o.lr / bc1) * m.cwiseQuotient((v.array().sqrt() / std::sqrt(bc2) + o.eps).matrix());
      Wref = wd.template cast<T>();
      REQUIRE(rel_diff(W, Wref) <= same_formula_tol<T>());
    }
  }
}

TEST_CASE("decoupled decay factor rejects shrinks outside 0 < rho <= 1", "[update]") {
  CHECK(decay_factor(0.1, 0.5) == Approx(0.95).epsilon(1e-15));
  CHECK(decay_factor(0.1, 0.0) == 1.0);
  CHECK_THROWS_AS(decay_factor(1.0, 1.0), std::invalid_argument);   // ρ = 0 erases the weights
  CHECK_THROWS_AS(decay_factor(0.1, -1.0), std::invalid_argument);  // ρ > 1 is growth
  Rng rng(104);
  const Mat<double> W = gaussian<double>(rng, 3, 2), U = gaussian<double>(rng, 3, 2);
  CHECK(rel_diff(shrink_plus_increment(W, 0.9, U), Mat<double>(0.9 * W + U)) == 0.0);
  CHECK_THROWS_AS(shrink_plus_increment(W, 0.9, Mat<double>(gaussian<double>(rng, 2, 3))), std::invalid_argument);
}

TEST_CASE("rule kinds parse, name and dispatch to the matching rule", "[update]") {
  for (RuleKind k : {RuleKind::sgd, RuleKind::momentum, RuleKind::adamw, RuleKind::muon, RuleKind::hyperball}) {
    CHECK(parse_rule_kind(rule_kind_name(k)) == k);
    CHECK(rule_kind(default_rule_options(k)) == k);
  }
  CHECK_THROWS_WITH(parse_rule_kind("adam"), Catch::Contains("adam") && Catch::Contains("sgd|momentum|adamw|muon|hyperball"));
  CHECK_THROWS_AS(parse_orthogonaliser("svd?"), std::invalid_argument);

  Rng rng(105);
  for (int t = 0; t < kTrials; ++t) {
    const Mat<double> W = gaussian<double>(rng, 5, 3), G = gaussian<double>(rng, 5, 3);
    const RuleKind k = static_cast<RuleKind>(t % 5);
    RuleState<double> s1, s2;
    const Step<double> a = propose(default_rule_options(k), W, G, s1);
    Step<double> b;
    switch (k) {
      case RuleKind::sgd: b = sgd_step(SgdOptions{}, W, G, s2); break;
      case RuleKind::momentum: b = momentum_step(MomentumOptions{}, W, G, s2); break;
      case RuleKind::adamw: b = adamw_step(AdamWOptions{}, W, G, s2); break;
      case RuleKind::muon: b = muon_step(MuonOptions{}, W, G, s2); break;
      case RuleKind::hyperball: b = hyperball_step(HyperballOptions{}, W, G, s2); break;
    }
    REQUIRE(rel_diff(a.U, b.U) == 0.0);
    REQUIRE(a.rho == b.rho);
    REQUIRE(a.radius == b.radius);
  }
}

TEST_CASE("step_pair drives both factors and apply_pair performs A <- rho_A A + U_A", "[update]") {
  Rng rng(106);
  for (int t = 0; t < kTrials; ++t) {
    Mat<double> A = gaussian<double>(rng, 5, 2), B = gaussian<double>(rng, 4, 2);
    const Mat<double> GA = gaussian<double>(rng, 5, 2), GB = gaussian<double>(rng, 4, 2);
    SgdOptions oa, ob;
    oa.lr = 0.1;
    oa.weight_decay = uniform(rng, 0.0, 1.0);
    ob.lr = 0.05;
    ob.weight_decay = uniform(rng, 0.0, 1.0);
    PairState<double> st;
    const PairStep<double> s = step_pair<double>(oa, ob, A, B, GA, GB, st);
    const Mat<double> A0 = A, B0 = B;
    apply_pair(A, B, s);
    REQUIRE(rel_diff(A, Mat<double>((1 - 0.1 * oa.weight_decay) * A0 - 0.1 * GA)) <= kSameFormulaTolDouble);
    REQUIRE(rel_diff(B, Mat<double>((1 - 0.05 * ob.weight_decay) * B0 - 0.05 * GB)) <= kSameFormulaTolDouble);
  }
  PairState<double> st;
  const Mat<double> A = gaussian<double>(rng, 5, 2), B = gaussian<double>(rng, 4, 3);
  CHECK_THROWS_AS(step_pair<double>(SgdOptions{}, A, B, A, B, st), std::invalid_argument);
  const Mat<double> Bok = gaussian<double>(rng, 4, 2);
  CHECK_THROWS_AS(step_pair<double>(SgdOptions{}, A, Bok, A, A, st), std::invalid_argument);  // G_B wrong shape
}

namespace {
// Reference float → bf16 round-to-nearest-even by bit manipulation (the usual 0x7FFF + lsb trick).
float bf16_bits_reference(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;  // inf / NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  u &= 0xFFFF0000u;
  return std::bit_cast<float>(u);
}
}  // namespace

TEST_CASE("bf16 rounding is round-to-nearest-even with overflow, NaN and subnormals", "[update][bf16]") {
  CHECK(round_to_bf16(1.0) == 1.0);
  CHECK(round_to_bf16(1.0 + 0x1.0p-8) == 1.0);                      // tie → even (1.0)
  CHECK(round_to_bf16(1.0 + 3 * 0x1.0p-8) == 1.0 + 0x1.0p-6);       // tie → even (mantissa 2)
  CHECK(round_to_bf16(1.0 + 0x1.0p-8 + 0x1.0p-30) == 1.0 + 0x1.0p-7);  // just above the tie rounds up
  CHECK(round_to_bf16(-3.0) == -3.0);
  CHECK(std::isinf(round_to_bf16(3.4e38)));                          // above the largest bf16 + half ulp
  CHECK(round_to_bf16(kBf16Max) == kBf16Max);
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<double>::quiet_NaN())));
  CHECK(round_to_bf16(0x1.0p-140) == 0.0);                           // below half the smallest subnormal
  CHECK(round_to_bf16(0x1.0p-133) == 0x1.0p-133);                    // smallest bf16 subnormal
  CHECK(std::signbit(round_to_bf16(-0.0)));

  // Agreement with the bit-trick on floats spread over the whole exponent range (including the
  // subnormal range), 100000 draws; the double routine must give the identical float.
  Rng rng(107);
  for (int t = 0; t < 100000; ++t) {
    const float x = static_cast<float>(std::ldexp(uniform(rng, -2.0, 2.0), static_cast<int>(uniform(rng, -140.0, 127.0))));
    const float want = bf16_bits_reference(x);
    const float got = static_cast<float>(round_to_bf16(static_cast<double>(x)));
    INFO("x = " << x);
    REQUIRE(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want));
  }
  const Mat<float> m = gaussian<float>(rng, 3, 3);
  const Mat<float> r = round_to_bf16(m);
  for (Index i = 0; i < m.size(); ++i) CHECK(r(i) == bf16_bits_reference(m(i)));
}

}  // namespace GAUGELAB_TU
