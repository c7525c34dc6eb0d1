// The gauge-offset start (gpt2/train/gaugefix.hpp) and the symmetry that motivates it: from the
// balanced start (every multiplier 1) the Q/K multipliers of a head get equal gradients, so no optimizer
// that treats them alike can make them drift; the offset moves each head along its orbit (logits kept,
// drift 2σ|z_h|), after which r_Q and r_K get different gradients.
#include <cmath>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/log.h>
#include <ATen/ops/randint.h>

#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Logits before/after a gauge move, relative to the largest logit (test_train_gaugefix.cpp argues it).
constexpr double kLogitRounding = 2e-5;

at::Tensor ids(std::int64_t vocab, std::uint64_t seed) {
  at::manual_seed(seed);
  return at::randint(0, vocab, {2, 12}, at::TensorOptions().dtype(at::kLong));
}

// ∂L/∂r_Q and ∂L/∂r_K of every layer, stacked [L, d], for one batch of next-token loss.
std::pair<at::Tensor, at::Tensor> qk_multiplier_grads(gpt2::GPT& m, const at::Tensor& idx) {
  for (gpt2::Block& b : m.h)
    for (at::Tensor* r : {&b.q().r, &b.k().r})
      if (r->grad().defined()) r->mutable_grad().zero_();
  const at::Tensor x = idx.narrow(1, 0, idx.size(1) - 1).contiguous();
  const at::Tensor y = idx.narrow(1, 1, idx.size(1) - 1).contiguous();
  m.loss(x, y).backward();
  std::vector<at::Tensor> gq, gk;
  for (gpt2::Block& b : m.h) {
    gq.push_back(b.q().r.grad().clone());
    gk.push_back(b.k().r.grad().clone());
  }
  return {at::stack(gq), at::stack(gk)};
}

}  // namespace

TEST_CASE("gauge start: the offset keeps the logits and sets each head's drift to 2 sigma |z_h|") {
  for (const bool bias : {false, true}) {
    CAPTURE(bias);
    gpt2::ModelConfig c = test::nano_config();
    c.bias = bias;
    gpt2::GPT m(c, 3);
    if (bias) test::randomize_biases_norms(m, 4);  // nonzero b_Q, b_K: they must move with r_Q, r_K
    const at::Tensor idx = ids(c.vocab_size, 5);
    at::Tensor before;
    {
      at::NoGradGuard no_grad;
      before = m.logits(idx);
    }
    const double sigma = 0.7;
    const at::Tensor log_g = gpt2::offset_qk_gauge(m, sigma, 42);  // [L, H]
    CHECK(log_g.abs().max().item<double>() > 0.1);                 // a real move
    at::NoGradGuard no_grad;
    CHECK(test::max_rel_diff(m.logits(idx), before) < kLogitRounding);
    const gpt2::QkScales s = gpt2::qk_head_scales(m);
    // s_Q = exp(-log g), s_K = exp(log g) from 1: log(s_Q/s_K) = -2 log g.
    const at::Tensor ratio = (s.s_q / s.s_k).log().to(at::kDouble);
    CHECK((ratio + 2.0 * log_g).abs().max().item<double>() < 1e-5);
    CHECK((s.s_q * s.s_k - 1.0).abs().max().item<double>() < 1e-5);  // the product (the function's part) is 1
  }
}

TEST_CASE("gauge start: sigma 0 changes nothing, the draw is the seed's, and Q/K row multipliers are required") {
  gpt2::GPT a(test::nano_config(), 7), b(test::nano_config(), 7), c(test::nano_config(), 7);
  CHECK(gpt2::offset_qk_gauge(a, 0.0, 1).abs().max().item<double>() == 0.0);
  CHECK(a.h[0].q().r.equal(c.h[0].q().r));
  const at::Tensor g1 = gpt2::offset_qk_gauge(b, 0.5, 99), g2 = gpt2::offset_qk_gauge(c, 0.5, 99);
  CHECK(g1.equal(g2));
  CHECK(b.h[1].k().r.equal(c.h[1].k().r));
  gpt2::GPT d(test::nano_config(), 7);
  CHECK_FALSE(gpt2::offset_qk_gauge(d, 0.5, 100).equal(g1));

  gpt2::ModelConfig none = test::nano_config();
  none.lrm = gpt2::LrmPlacement::parse("none");
  gpt2::GPT e(none, 7);
  CHECK_THROWS_AS(gpt2::offset_qk_gauge(e, 0.5, 1), std::invalid_argument);
  CHECK_THROWS_AS(gpt2::offset_qk_gauge(a, -1.0, 1), std::invalid_argument);
}

TEST_CASE("gauge start: balanced multipliers get equal Q and K gradients, offset ones do not") {
  for (const bool bias : {false, true}) {
    CAPTURE(bias);
    gpt2::ModelConfig c = test::nano_config();
    c.bias = bias;
    gpt2::GPT m(c, 11);
    const at::Tensor idx = ids(c.vocab_size, 12);
    // Balanced: ∂L/∂r_Q,j = r_K,j·A_j = A_j = ∂L/∂r_K,j (float32 paths differ only by rounding).
    auto [gq, gk] = qk_multiplier_grads(m, idx);
    const double scale = gq.abs().max().item<double>();
    REQUIRE(scale > 0);
    CHECK((gq - gk).abs().max().item<double>() < 1e-4 * scale);
    // Offset by g: ∂L/∂r_Q = r_K·A = g·A, ∂L/∂r_K = r_Q·A = A/g — they differ by g² per head.
    const at::Tensor log_g = gpt2::offset_qk_gauge(m, 0.5, 13);
    auto [hq, hk] = qk_multiplier_grads(m, idx);
    CHECK((hq - hk).abs().max().item<double>() > 1e-2 * hq.abs().max().item<double>());
    const std::int64_t dh = c.head_dim();
    const at::Tensor g2 = (2.0 * log_g).exp().repeat_interleave(dh, 1).to(at::kFloat);  // [L, d]
    CHECK((hq - g2 * hk).abs().max().item<double>() < 1e-4 * hq.abs().max().item<double>());
  }
}

}  // namespace GAUGELAB_TU
