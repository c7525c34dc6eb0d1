// QR canonical slice (seed 001 §7.2, Prop. 45, Algorithm 1): W_qᵀW_q = I and W_vᵀW_v = I, diag R > 0,
// logits and outputs preserved, idempotent, heads ordered by descending ‖W_K‖_F, the same gauge-invariant
// content for every point of an orbit, and the residual O(d_k) of Remark 49.
// GCC 12 emits a false -Wmaybe-uninitialized inside Eigen's AVX-512 GEMM packing (_mm512_undefined_ps
// in avx512fintrin.h) when built with -march=native; it is not about this code, so it is silenced here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <catch2/catch.hpp>

#include "core/gauge_fix.hpp"
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

constexpr int kPoints = 1000;  // heads / layers per property
constexpr Index kTokens = 6;

// Householder QR is backward stable: QᵀQ = I to a few ulp·size ≈ 1e-15; 1e-13 leaves a wide margin.
constexpr double kOrthonormalTol = 1e-13;

/// Layer pushed off the slice by a random layer gauge (cond 10, random head order).
AttentionLayer<double> layer_point(core::Rng& rng, int i) {
  const Index h = 1 + i % 5, dk = 1 + i % 4, dv = 1 + (i / 4) % 4, d = 8;
  return core::apply_layer_gauge(test::random_layer<double>(rng, d, h, dk, dv),
                                 test::random_layer_gauge<double>(rng, h, dk, dv, test::kTestKappa));
}

double head_key_norm(const AttentionLayer<double>& l, Index i) {
  return l.W_k.middleCols(i * l.d_k(), l.d_k()).norm();
}

}  // namespace

TEST_CASE("QR slice of a head: orthonormal W_q and W_v, diag R > 0, logits and output kept", "[fix][qr]") {
  core::Rng rng(1001);
  MatchResult total;
  double worst_orth = 0.0;
  bool triangular_positive = true;
  auto fix = [](const AttentionHead<double>& h) { return core::qr_canonical_head(h).head; };
  for (int i = 0; i < kPoints; ++i) {
    const Index dk = 1 + i % 4, dv = 1 + (i / 4) % 4, d = 8;
    const AttentionHead<double> h = core::apply_head_gauge(test::random_head<double>(rng, d, dk, dv),
                                                           core::random_gl<double>(rng, dk, test::kTestKappa),
                                                           core::random_gl<double>(rng, dv, test::kTestKappa));
    const Mat<double> x = test::gaussian<double>(rng, kTokens, d);
    const auto r = core::qr_canonical_head(h);
    worst_orth = std::max({worst_orth, (r.head.W_q.transpose() * r.head.W_q - Mat<double>::Identity(dk, dk)).norm(),
                           core::value_orthonormality_error(r.head)});
    for (const Mat<double>* rr : {&r.R_q, &r.R_v}) {
      triangular_positive = triangular_positive && (rr->diagonal().array() > 0.0).all() &&
                            Mat<double>(rr->triangularView<Eigen::StrictlyLower>()).isZero(0.0);
    }
    // The slice is the gauge S = R_q⁻¹, C = R_v⁻¹ of seed 001 Prop. 45: W_q R_q⁻¹ = Q_q.
    worst_orth = std::max(worst_orth, (h.W_q - r.head.W_q * r.R_q).norm() / h.W_q.norm());
    total.merge(test::expect_fix_preserves_object(fix, [&](const auto& hh) { return core::head_logits(hh, x); }, h,
                                                  test::kDoubleGaugeTol));
    total.merge(test::expect_fix_preserves_object(fix, [&](const auto& hh) { return core::head_output(hh, x); }, h,
                                                  test::kDoubleGaugeTol));
    total.merge(test::expect_fix_idempotent(fix, h, kOrthonormalTol));
  }
  GAUGE_REQUIRE(total);
  REQUIRE(worst_orth <= kOrthonormalTol);
  REQUIRE(triangular_positive);
}

TEST_CASE("canonicalize_layer: output kept, idempotent, heads by descending ‖W_K‖_F", "[fix][qr][layer]") {
  core::Rng rng(1002);
  MatchResult total;
  bool ordered = true, identity_second_time = true;
  auto fix = [](const AttentionLayer<double>& l) { return core::canonicalize_layer(l).layer; };
  for (int i = 0; i < kPoints; ++i) {
    const AttentionLayer<double> l = layer_point(rng, i);
    const Mat<double> x = test::gaussian<double>(rng, kTokens, l.d_model());
    const auto c = core::canonicalize_layer(l);
    for (Index j = 0; j + 1 < l.n_heads; ++j) ordered = ordered && head_key_norm(c.layer, j) >= head_key_norm(c.layer, j + 1);
    identity_second_time = identity_second_time && core::canonicalize_layer(c.layer).perm == core::identity_permutation(l.n_heads);
    total.merge(test::expect_fix_preserves_object(
        fix, [&](const AttentionLayer<double>& ll) { return core::layer_output(ll, x, core::AttentionOptions{true}); }, l,
        test::kDoubleGaugeTol));
    total.merge(test::expect_fix_idempotent(fix, l, kOrthonormalTol));
  }
  GAUGE_REQUIRE(total);
  REQUIRE(ordered);
  REQUIRE(identity_second_time);
}

TEST_CASE("canonical forms of one orbit agree on every gauge-invariant block and on the order", "[fix][qr][layer]") {
  // ‖W_K‖_F in canonical form equals ‖W_q W_kᵀ‖_F (W_q orthonormal), an invariant: so g·L and L are
  // sorted the same way, and per canonical head the products W_qW_kᵀ, W_vW_o, b_qW_kᵀ, ... coincide.
  core::Rng rng(1003);
  double worst = 0.0;
  for (int i = 0; i < kPoints; ++i) {
    const Index h = 1 + i % 5, dk = 1 + i % 4, dv = 1 + (i / 4) % 4, d = 8;
    const AttentionLayer<double> l = test::random_layer<double>(rng, d, h, dk, dv);
    const auto g = test::random_layer_gauge<double>(rng, h, dk, dv, test::kTestKappa);
    const auto a = core::canonicalize_layer(l).layer;
    const auto b = core::canonicalize_layer(core::apply_layer_gauge(l, g)).layer;
    for (Index j = 0; j < h; ++j) {
      const auto ha = core::head(a, j), hb = core::head(b, j);
      const Mat<double> qk_a = ha.W_q * ha.W_k.transpose(), qk_b = hb.W_q * hb.W_k.transpose();
      const Mat<double> vo_a = ha.W_v * ha.W_o, vo_b = hb.W_v * hb.W_o;
      worst = std::max({worst, (qk_a - qk_b).norm() / qk_a.norm(), (vo_a - vo_b).norm() / vo_a.norm()});
      // The residual freedom is orthogonal (Remark 49): W_q^b = W_q^a·O with O = W_q^aᵀ W_q^b orthogonal.
      const Mat<double> o = ha.W_q.transpose() * hb.W_q;
      worst = std::max(worst, (o.transpose() * o - Mat<double>::Identity(dk, dk)).norm());
    }
  }
  REQUIRE(worst <= test::kDoubleGaugeTol);
}

TEST_CASE("an orthogonal Q/K gauge keeps a canonical head on the slice (residual O(d_k))", "[fix][qr]") {
  core::Rng rng(1004);
  double worst = 0.0;
  for (int i = 0; i < kPoints; ++i) {
    const Index dk = 1 + i % 4;
    const auto c = core::qr_canonical_head(test::random_head<double>(rng, 8, dk, 2)).head;
    const auto moved = core::apply_qk_gauge(c, core::random_orthogonal<double>(rng, dk));
    worst = std::max(worst, (moved.W_q.transpose() * moved.W_q - Mat<double>::Identity(dk, dk)).norm());
  }
  REQUIRE(worst <= kOrthonormalTol);
}

TEST_CASE("QR slice preserves the layer output in float", "[fix][qr][float]") {
  core::Rng rng(1005);
  MatchResult total;
  for (int i = 0; i < 200; ++i) {
    const Index h = 1 + i % 4, dk = 1 + i % 3, dv = 1 + (i / 3) % 3, d = 8;
    const auto l = test::random_layer<float>(rng, d, h, dk, dv);
    const Mat<float> x = test::gaussian<float>(rng, kTokens, d);
    total.merge(test::expect_fix_preserves_object([](const auto& ll) { return core::canonicalize_layer(ll).layer; },
                                                  [&](const auto& ll) { return core::layer_output(ll, x); }, l,
                                                  test::kFloatGaugeTol));
  }
  GAUGE_REQUIRE(total);
}

TEST_CASE("QR slice needs d >= dk (full column rank, seed 001 A4)", "[fix][qr]") {
  core::Rng rng(1006);
  const auto h = test::random_head<double>(rng, 2, 3, 1);
  REQUIRE_THROWS_AS(core::qr_canonical_head(h), std::invalid_argument);
}

}  // namespace GAUGELAB_TU
