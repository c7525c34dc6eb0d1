// Attention gauge (seed 001 Definition 1, Prop. 12, Theorem 2): per-head GL(d_k) × GL(d_v) actions on
// logits and outputs (biases included), the layer group (GL^h × GL^h) ⋊ S_h on the packed GPT-2 layout,
// group laws, and the three invalid families of seed 001 App. G.1 caught by the invariance matcher.
// GCC 12 emits a false -Wmaybe-uninitialized inside Eigen's AVX-512 GEMM packing (_mm512_undefined_ps
// in avx512fintrin.h) when built with -march=native; it is not about this code, so it is silenced here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <catch2/catch.hpp>

#include "core/attention_gauge.hpp"
#include "core/gauge_sampling.hpp"
#include "support/gauge_matchers.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::AttentionHead;
using core::AttentionLayer;
using core::Index;
using core::Mat;
using test::MatchResult;

namespace {

constexpr int kPoints = 100;         // random heads / layers per property
constexpr int kGaugesPerPoint = 10;  // 100 × 10 = 1000 gauge samples per property
constexpr Index kTokens = 6;         // sequence length T of the probe inputs

struct HeadShape {
  Index d, dk, dv;
};
HeadShape head_shape(int i) { return {8 + 4 * (i % 2), 1 + i % 4, 1 + (i / 4) % 4}; }

template <class T>
MatchResult head_sweep(std::uint64_t seed, double tol, bool qk_sector, bool causal) {
  core::Rng rng(seed);
  MatchResult total;
  const core::AttentionOptions opts{causal};
  for (int i = 0; i < kPoints; ++i) {
    const HeadShape s = head_shape(i);
    const AttentionHead<T> h = test::random_head<T>(rng, s.d, s.dk, s.dv);
    const Mat<T> x = test::gaussian<T>(rng, kTokens, s.d);
    const Index r = qk_sector ? s.dk : s.dv;
    auto sample = [r](core::Rng& g) { return core::random_gl<T>(g, r, test::kTestKappa); };
    if (qk_sector && !causal) {  // logits are the object the Q/K gauge must preserve (no −∞ entries)
      total.merge(test::expect_function_invariant([&](const AttentionHead<T>& hh) { return core::head_logits(hh, x); },
                                                  h, sample, [](const auto& hh, const Mat<T>& g) { return core::apply_qk_gauge(hh, g); },
                                                  kGaugesPerPoint, rng, tol));
    } else {
      total.merge(test::expect_function_invariant(
          [&](const AttentionHead<T>& hh) { return core::head_output(hh, x, opts); }, h, sample,
          [qk_sector](const auto& hh, const Mat<T>& g) {
            return qk_sector ? core::apply_qk_gauge(hh, g) : core::apply_vo_gauge(hh, g);
          },
          kGaugesPerPoint, rng, tol));
    }
  }
  return total;
}

template <class T>
MatchResult layer_sweep(std::uint64_t seed, double tol) {
  core::Rng rng(seed);
  MatchResult total;
  for (int i = 0; i < kPoints; ++i) {
    const Index h = 1 + i % 4, dk = 1 + (i / 4) % 3, dv = 1 + (i / 12) % 3, d = 8;
    const AttentionLayer<T> l = test::random_layer<T>(rng, d, h, dk, dv);
    const Mat<T> x = test::gaussian<T>(rng, kTokens, d);
    total.merge(test::expect_function_invariant(
        [&](const AttentionLayer<T>& ll) { return core::layer_output(ll, x, core::AttentionOptions{i % 2 == 0}); }, l,
        [=](core::Rng& g) { return test::random_layer_gauge<T>(g, h, dk, dv, test::kTestKappa); },
        [](const AttentionLayer<T>& ll, const core::LayerGauge<T>& g) { return core::apply_layer_gauge(ll, g); },
        kGaugesPerPoint, rng, tol));
  }
  return total;
}

}  // namespace

TEST_CASE("Q/K gauge preserves head logits, biases included (double)", "[gauge][attention]") {
  GAUGE_REQUIRE(head_sweep<double>(201, test::kDoubleGaugeTol, true, false));
}

TEST_CASE("Q/K and V/O gauges preserve the head output, causal and not (double)", "[gauge][attention]") {
  GAUGE_REQUIRE(head_sweep<double>(202, test::kDoubleGaugeTol, true, true));
  GAUGE_REQUIRE(head_sweep<double>(203, test::kDoubleGaugeTol, false, false));
  GAUGE_REQUIRE(head_sweep<double>(204, test::kDoubleGaugeTol, false, true));
}

TEST_CASE("Q/K and V/O gauges preserve logits and output (float)", "[gauge][attention][float]") {
  GAUGE_REQUIRE(head_sweep<float>(205, test::kFloatGaugeTol, true, false));
  GAUGE_REQUIRE(head_sweep<float>(206, test::kFloatGaugeTol, false, false));
}

TEST_CASE("the layer group (GL^h × GL^h) ⋊ S_h preserves the layer output", "[gauge][attention][layer]") {
  GAUGE_REQUIRE(layer_sweep<double>(207, test::kDoubleGaugeTol));
  GAUGE_REQUIRE(layer_sweep<float>(208, test::kFloatGaugeTol));
}

TEST_CASE("head gauges obey the group laws", "[gauge][attention]") {
  core::Rng rng(209);
  MatchResult total;
  auto mul = [](const Mat<double>& g, const Mat<double>& k) -> Mat<double> { return g * k; };
  auto inv = [](const Mat<double>& g) -> Mat<double> { return g.inverse(); };
  for (int i = 0; i < kPoints; ++i) {
    const HeadShape s = head_shape(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const Index dk = s.dk, dv = s.dv;
    total.merge(test::expect_group_laws(
        h, [dk](core::Rng& g) { return core::random_gl<double>(g, dk, test::kTestKappa); },
        [](const AttentionHead<double>& hh, const Mat<double>& g) { return core::apply_qk_gauge(hh, g); }, mul, inv,
        Mat<double>::Identity(dk, dk), kGaugesPerPoint / 2, rng, test::kDoubleGaugeTol));
    total.merge(test::expect_group_laws(
        h, [dv](core::Rng& g) { return core::random_gl<double>(g, dv, test::kTestKappa); },
        [](const AttentionHead<double>& hh, const Mat<double>& g) { return core::apply_vo_gauge(hh, g); }, mul, inv,
        Mat<double>::Identity(dv, dv), kGaugesPerPoint / 2, rng, test::kDoubleGaugeTol));
  }
  GAUGE_REQUIRE(total);
}

TEST_CASE("layer gauges (with head permutations) obey the group laws", "[gauge][attention][layer]") {
  core::Rng rng(210);
  MatchResult total;
  for (int i = 0; i < kPoints; ++i) {
    const Index h = 1 + i % 5, dk = 1 + i % 3, dv = 1 + (i / 3) % 3, d = 8;
    const AttentionLayer<double> l = test::random_layer<double>(rng, d, h, dk, dv);
    total.merge(test::expect_group_laws(
        l, [=](core::Rng& g) { return test::random_layer_gauge<double>(g, h, dk, dv, test::kTestKappa); },
        [](const AttentionLayer<double>& ll, const core::LayerGauge<double>& g) { return core::apply_layer_gauge(ll, g); },
        [](const auto& g, const auto& k) { return core::compose_layer_gauges(g, k); },
        [](const auto& g) { return core::inverse_layer_gauge(g); }, core::identity_layer_gauge<double>(h, dk, dv),
        kGaugesPerPoint, rng, test::kDoubleGaugeTol));
  }
  GAUGE_REQUIRE(total);
}

TEST_CASE("packed layer: head extraction, insertion and output decomposition", "[attention][layer]") {
  core::Rng rng(211);
  const AttentionLayer<double> l = test::random_layer<double>(rng, 12, 3, 4, 2);
  const Mat<double> x = test::gaussian<double>(rng, kTokens, 12);
  AttentionLayer<double> copy = l;
  Mat<double> sum = Mat<double>::Zero(kTokens, 12);
  for (Index i = 0; i < 3; ++i) {
    core::set_head(copy, i, core::head(l, i));
    sum += core::head_output(core::head(l, i), x);
  }
  REQUIRE(test::ParamDistance{}(l, copy) == 0.0);
  // layer = Σ_i head_i + b_o (seed 001 eq. 2.3 with Prop. 12's output bias).
  REQUIRE(core::invariance_error(core::layer_output(l, x), Mat<double>(sum.rowwise() + l.b_o)).max_abs <= 1e-13);
  // Head i of the layer owns columns [i·dk, (i+1)·dk): head 1's W_q is columns 4..7.
  REQUIRE(core::head(l, 1).W_q == l.W_q.middleCols(4, 4));
  REQUIRE_THROWS_AS(core::head(l, 3), std::invalid_argument);
  REQUIRE_THROWS_AS(core::permute_heads(l, core::Permutation{0, 0, 1}), std::invalid_argument);
}

TEST_CASE("causal mask: zero attention to later tokens", "[attention]") {
  core::Rng rng(212);
  const AttentionHead<double> h = test::random_head<double>(rng, 8, 3, 2);
  const Mat<double> a = core::softmax_rows(core::head_logits(h, test::gaussian<double>(rng, kTokens, 8), {true}));
  for (Index i = 0; i < kTokens; ++i) {
    REQUIRE(a.row(i).sum() == Approx(1.0).epsilon(1e-14));
    for (Index j = i + 1; j < kTokens; ++j) REQUIRE(a(i, j) == 0.0);
  }
}

TEST_CASE("the invalid transforms of seed 001 App. G.1 are caught", "[gauge][attention][negative]") {
  core::Rng rng(213);
  for (int i = 0; i < 20; ++i) {
    const HeadShape s = head_shape(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const Mat<double> x = test::gaussian<double>(rng, kTokens, s.d);
    const Index dk = s.dk, dv = s.dv;
    auto logits = [&](const AttentionHead<double>& hh) { return core::head_logits(hh, x); };
    auto output = [&](const AttentionHead<double>& hh) { return core::head_output(hh, x); };
    auto gk = [dk](core::Rng& g) { return core::random_gl<double>(g, dk, test::kTestKappa); };
    auto gv = [dv](core::Rng& g) { return core::random_gl<double>(g, dv, test::kTestKappa); };
    core::Rng draw(1000 + static_cast<std::uint64_t>(i));

    // (i) asymmetric: independent matrices on Q and K.
    const Mat<double> other = core::random_gl<double>(draw, dk, test::kTestKappa);
    const MatchResult asym = test::expect_function_invariant(
        logits, h, gk, [&](AttentionHead<double> hh, const Mat<double>& g) {
          hh.W_q = hh.W_q * g; hh.b_q = hh.b_q * g;
          hh.W_k = hh.W_k * other; hh.b_k = hh.b_k * other;
          return hh;
        }, kGaugesPerPoint, rng, test::kDoubleGaugeTol);
    // (ii) wrong inverse: the same S on K instead of S⁻ᵀ.
    const MatchResult same = test::expect_function_invariant(
        logits, h, gk, [](AttentionHead<double> hh, const Mat<double>& g) {
          hh.W_q = hh.W_q * g; hh.b_q = hh.b_q * g;
          hh.W_k = hh.W_k * g; hh.b_k = hh.b_k * g;
          return hh;
        }, kGaugesPerPoint, rng, test::kDoubleGaugeTol);
    // (iii) V/O mismatch: C on V without C⁻¹ on W_o.
    const MatchResult vo = test::expect_function_invariant(
        output, h, gv, [](AttentionHead<double> hh, const Mat<double>& g) {
          hh.W_v = hh.W_v * g; hh.b_v = hh.b_v * g;
          return hh;
        }, kGaugesPerPoint, rng, test::kDoubleGaugeTol);
    // (iv) biases left behind: a valid weight gauge that forgets b_q S / b_k S⁻ᵀ (seed 001 Prop. 12).
    const MatchResult nobias = test::expect_function_invariant(
        logits, h, gk, [](const AttentionHead<double>& hh, const Mat<double>& g) {
          AttentionHead<double> out = core::apply_qk_gauge(hh, g);
          out.b_q = hh.b_q; out.b_k = hh.b_k;
          return out;
        }, kGaugesPerPoint, rng, test::kDoubleGaugeTol);
    for (const MatchResult* r : {&asym, &same, &vo, &nobias}) {
      INFO(r->msg);
      REQUIRE_FALSE(r->ok);
      REQUIRE(r->worst > 1e-3);
    }
  }
}

}  // namespace GAUGELAB_TU
