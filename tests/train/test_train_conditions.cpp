// The instrument's conditions and observables on small models: condition D's ratio step (GaugeFix)
// preserves the function while its magnitude step (the cap) does not; QK-norm makes the scores blind
// to a head's Q scale; the logged attention-logit maximum and log-partition equal a direct
// recomputation from the effective weights.
#include <cmath>
#include <limits>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/full.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/head_gauge.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Relative float32 rounding of logits through two layers (as test_train_gaugefix.cpp argues it).
constexpr double kLogitRounding = 2e-5;

std::unique_ptr<gpt2::GPT> skewed(gpt2::ModelConfig c, std::uint64_t seed) {
  auto m = std::make_unique<gpt2::GPT>(c, seed);
  test::randomize_multipliers(*m, seed + 1);
  at::NoGradGuard no_grad;
  for (gpt2::Block& b : m->h) b.q().r.mul_(3.0);  // every head's s_Q·s_K well above 1
  return m;
}

at::Tensor ids(std::int64_t vocab) { return at::randint(0, vocab, {2, 12}, at::TensorOptions().dtype(at::kLong)); }

}  // namespace

TEST_CASE("condition D: the fix keeps the logits, the cap changes them and holds s_Q*s_K at the cap") {
  auto m = skewed(test::nano_config(), 5);
  const at::Tensor idx = ids(m->config().vocab_size);
  at::NoGradGuard no_grad;
  const at::Tensor before = m->logits(idx);
  gpt2::gauge_fix(*m, 1e-12);
  CHECK(test::max_rel_diff(m->logits(idx), before) < kLogitRounding);  // ratio step: a gauge move
  const gpt2::QkScales s0 = gpt2::qk_head_scales(*m);
  const double cap = 0.5 * (s0.s_q * s0.s_k).min().item<double>();  // every head above it
  CHECK(gpt2::cap_qk_product(*m, cap) == m->config().n_layer * m->config().n_head);
  const gpt2::QkScales s1 = gpt2::qk_head_scales(*m);
  CHECK((s1.s_q * s1.s_k - cap).abs().max().item<double>() < 1e-5 * cap);
  CHECK(gpt2::qk_drift(s1).max < 1e-5);  // the ratio the fix set is untouched
  CHECK(test::max_rel_diff(m->logits(idx), before) > 100 * kLogitRounding);  // magnitude step: not a gauge move
  CHECK(gpt2::cap_qk_product(*m, 10 * cap) == 0);  // under the cap nothing moves
}

TEST_CASE("QK-norm: the scores ignore a head's Q scale, without it they do not") {
  for (const gpt2::QkNorm norm : {gpt2::QkNorm::rms, gpt2::QkNorm::layernorm, gpt2::QkNorm::none}) {
    gpt2::ModelConfig c = test::nano_config();
    c.qk_norm = norm;
    c.bias = false;
    gpt2::GPT m(c, 9);
    const at::Tensor idx = ids(c.vocab_size);
    at::NoGradGuard no_grad;
    const at::Tensor before = m.logits(idx);
    for (gpt2::Block& b : m.h) b.q().r.narrow(0, 0, c.head_dim()).mul_(4.0);  // head 0's queries x4
    const double moved = test::max_rel_diff(m.logits(idx), before);
    INFO(gpt2::word(norm) << ": " << moved);
    if (norm == gpt2::QkNorm::none) CHECK(moved > 100 * kLogitRounding);
    else CHECK(moved < 1e-4);  // the norm's eps (1e-5 against |q|² ~ 1e-1) leaves a trace
  }
}

TEST_CASE("observables: attention-logit max and log-partition equal a recomputation from effective weights") {
  gpt2::ModelConfig c = test::nano_config();
  c.n_layer = 1;
  gpt2::GPT m(c, 13);
  test::randomize_multipliers(m, 14);
  test::randomize_biases_norms(m, 15);
  const at::Tensor idx = ids(c.vocab_size);
  at::NoGradGuard no_grad;
  const at::Tensor got = m.attention_logit_max(idx);  // [1, H]
  const at::Tensor signed_max = m.attention_logit_max(idx, /*absolute=*/false);  // [1, H]
  // Direct: x = wte[idx] + wpe, a = LN_1(x), q/k = a·W_effᵀ + b per head, scores q·kᵀ/√d_h, causal max.
  const std::int64_t T = idx.size(1), d = c.n_embd, H = c.n_head, dh = c.head_dim();
  const gpt2::Block& b = m.h[0];
  const at::Tensor x = m.wte.index_select(0, idx.flatten()).view({2, T, d}).add(m.wpe.narrow(0, 0, T));
  const at::Tensor a = at::layer_norm(x, {d}, b.ln_1_weight, b.ln_1_bias, c.layer_norm_eps);
  const at::Tensor w = b.c_attn.effective_weight();  // [3d, d]
  const at::Tensor q = at::linear(a, w.narrow(0, 0, d), b.b_q()), k = at::linear(a, w.narrow(0, d, d), b.b_k());
  for (std::int64_t h = 0; h < H; ++h) {
    const at::Tensor qh = q.narrow(2, h * dh, dh), kh = k.narrow(2, h * dh, dh);  // [2, T, dh]
    const at::Tensor s = at::matmul(qh, kh.transpose(1, 2)).div(std::sqrt(static_cast<double>(dh)));  // [2, T, T]
    double best = 0, best_signed = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < T; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        best = std::max(best, s.select(1, i).select(1, j).abs().max().item<double>());
        best_signed = std::max(best_signed, s.select(1, i).select(1, j).max().item<double>());
      }
    CHECK(std::abs(got[0][h].item<double>() - best) <= 1e-5 * best);
    CHECK(std::abs(signed_max[0][h].item<double>() - best_signed) <= 1e-5 * std::abs(best_signed));
  }
  // The trainer's probe takes both from one pass: the same values as the two calls.
  const auto [both_abs, both_signed] = m.attention_logit_maxima(idx);
  CHECK(both_abs.equal(got));
  CHECK(both_signed.equal(signed_max));
  CHECK((signed_max <= got).all().item<bool>());
  const double z = m.logits(idx).logsumexp(-1).mean().item<double>();
  CHECK(std::abs(m.log_partition_mean(idx) - z) <= 1e-6 * std::abs(z));
}

TEST_CASE("GaugeFix variants: per coordinate and V/O keep the logits and balance what they fix") {
  auto m = skewed(test::nano_config(), 21);
  test::randomize_biases_norms(*m, 22);
  const at::Tensor idx = ids(m->config().vocab_size);
  at::NoGradGuard no_grad;
  const at::Tensor before = m->logits(idx);
  gpt2::gauge_fix_coordinates(*m, 0.0);
  for (gpt2::Block& b : m->h) CHECK(b.q().r.abs().sub(b.k().r.abs()).abs().max().item<double>() < 1e-5);
  CHECK(test::max_rel_diff(m->logits(idx), before) < kLogitRounding);
  // A V/O gauge move (r_V·3, b_V·3, c_O/3): the function is the same, the balance is not.
  gpt2::rescale_vo_multipliers(m->h[0], at::full({m->config().n_embd}, 3.0, m->h[0].v().r.options()));
  const at::Tensor moved = m->logits(idx);
  CHECK(test::max_rel_diff(moved, before) < kLogitRounding);
  gpt2::gauge_fix_vo(*m, 0.0);
  const std::int64_t H = m->config().n_head;
  for (gpt2::Block& b : m->h) {
    const at::Tensor sv = b.v().r.view({H, -1}).square().mean(1).sqrt();
    const at::Tensor so = b.attn_proj.groups[0].c.view({H, -1}).square().mean(1).sqrt();
    CHECK(sv.sub(so).abs().max().item<double>() < 1e-5 * so.abs().max().item<double>());
  }
  CHECK(test::max_rel_diff(m->logits(idx), before) < kLogitRounding);
}

TEST_CASE("GaugeFix at the effective norms (Beff): keeps the logits, balances n_Q = n_K, which seed 000's fix does not") {
  auto m = skewed(test::nano_config(), 31);
  test::randomize_biases_norms(*m, 32);
  const at::Tensor idx = ids(m->config().vocab_size);
  at::NoGradGuard no_grad;
  const at::Tensor before = m->logits(idx);
  // Seed 000's GaugeFix balances the multipliers' RMS (drift 0) but not the effective maps: W̄ and the
  // column multipliers keep an imbalance of their own.
  gpt2::gauge_fix(*m, 0.0);
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(*m)).max < 1e-5);
  const double rho_after_b = gpt2::qk_effective_log_ratio(*m).abs().max().item<double>();
  CHECK(rho_after_b > 1e-2);
  const at::Tensor g = gpt2::gauge_fix_effective(*m, 0.0);
  CHECK(g.size(0) == m->config().n_layer);
  CHECK(g.size(1) == m->config().n_head);
  CHECK(gpt2::qk_effective_log_ratio(*m).abs().max().item<double>() < 1e-5);
  CHECK(test::max_rel_diff(m->logits(idx), before) < kLogitRounding);
  // Without row multipliers there is nothing to carry g: refused with the placement named.
  gpt2::ModelConfig c = test::nano_config();
  c.lrm = gpt2::LrmPlacement::none();
  gpt2::GPT plain(c, 33);
  CHECK(std::isfinite(gpt2::qk_effective_log_ratio(plain).abs().max().item<double>()));
  CHECK_THROWS_WITH(gpt2::gauge_fix_effective(plain, 0.0), Catch::Contains("row multipliers"));
}

}  // namespace GAUGELAB_TU
