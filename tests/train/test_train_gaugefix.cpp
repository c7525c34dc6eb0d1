// GaugeFix on the model's tensors (gpt2/train/gaugefix.hpp): its exactness (logits before and after a
// fix agree to float32 rounding), with and without biases. Its agreement with the core's reference math
// (core/gauge_fix_lrm.hpp, core/coordinates.hpp, core/transport.hpp) is in the parity table
// (tests/parity/parity_rows_gaugefix.cpp).
#include <memory>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/randint.h>

#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Logits before/after a fix: each W_eff entry is rounded once more in float32 (relative 6e-8), and a
// logit sums d of them; 2e-5 relative to the largest logit is ~100 float32 ulps and far below any
// real change (a wrong factor on one head moves logits by O(1e-1)).
constexpr double kLogitRounding = 2e-5;

// Nano model (2 layers, 2 heads) with random multipliers, biases and unequal Q/K scales.
std::unique_ptr<gpt2::GPT> skewed_model(std::uint64_t seed) {
  auto m = std::make_unique<gpt2::GPT>(test::nano_config(), seed);
  test::randomize_multipliers(*m, seed + 1);
  test::randomize_biases_norms(*m, seed + 2);
  at::NoGradGuard no_grad;
  for (gpt2::Block& b : m->h) b.q().r.mul_(2.5);  // a clear Q/K imbalance in every head
  return m;
}

}  // namespace

TEST_CASE("gaugefix: logits before and after a fix agree to float32 rounding") {
  auto m = skewed_model(31);
  const at::Tensor idx = at::randint(0, m->config().vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  const at::Tensor before = m->logits(idx);
  gpt2::gauge_fix(*m, 1e-12);
  const at::Tensor after = m->logits(idx);
  CHECK(test::max_rel_diff(after, before) < kLogitRounding);

  // Without the biases the move is not exact: scaling only r changes the logits visibly.
  auto m2 = skewed_model(31);
  const at::Tensor g = gpt2::gauge_fix(*m2, 1e-12);
  for (std::size_t l = 0; l < m2->h.size(); ++l) {  // undo the bias part only
    const at::Tensor gl = g[static_cast<std::int64_t>(l)].repeat_interleave(m2->config().head_dim());
    m2->h[l].b_q().mul_(gl);
    m2->h[l].b_k().div_(gl);
  }
  CHECK(test::max_rel_diff(m2->logits(idx), before) > 10 * kLogitRounding);
}

TEST_CASE("gaugefix: a model without biases (nanoGPT's bias=False) is fixed exactly and its drift becomes 0") {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = false;
  gpt2::GPT m(c, 41);
  test::randomize_multipliers(m, 42);
  {
    at::NoGradGuard no_grad;
    for (gpt2::Block& b : m.h) b.q().r.mul_(2.5);
  }
  const at::Tensor idx = at::randint(0, c.vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  const at::Tensor before = m.logits(idx);
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(m)).max > 0.5);  // log 2.5 and more
  gpt2::gauge_fix(m, 1e-12);
  CHECK(test::max_rel_diff(m.logits(idx), before) < kLogitRounding);
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(m)).max < 1e-6);
}

}  // namespace GAUGELAB_TU
