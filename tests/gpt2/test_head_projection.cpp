// The tensor gradient projection (gpt2/model/head_projection.hpp): the configurations it refuses, and an
// optimizer step projected at the weights before it, orthogonal to every orbit tangent there (the core's,
// core/gauge_lie.hpp). Its agreement with the core's reference head by head (head_horizontal_projection,
// head_horizontal_projection_approx) is in the parity table (tests/parity/parity_rows_projection.cpp).
#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/randn.h>

#include "core/gauge_lie.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/model/head_projection.hpp"
#include "gpt2_test_helpers.hpp"
#include "projection_layer.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
namespace core = gaugelab::core;

TEST_CASE("the projection refuses attention multipliers and QK-norm, and none leaves gradients alone", "[gpt2][projection]") {
  ModelConfig c = gaugelab::test::nano_config();  // default placement: rows+columns on q, k, v, attn_out
  CHECK_THROWS_AS(require_projectable(c), std::invalid_argument);
  c.lrm = LrmPlacement::parse("mlp_in:row,mlp_out:column");
  CHECK_NOTHROW(require_projectable(c));
  c.qk_norm = QkNorm::rms;
  CHECK_THROWS_AS(require_projectable(c), std::invalid_argument);
  const gaugelab::test::LayerTensors t = gaugelab::test::random_layer(8, false, 99);
  at::Tensor g_attn = t.g_attn.clone(), g_proj = t.g_proj.clone(), none;
  project_layer_gradients(t.w_attn, none, t.w_proj, g_attn, none, g_proj, 2, GradProjection::none);
  CHECK(g_attn.equal(t.g_attn));
  CHECK(g_proj.equal(t.g_proj));
  CHECK_THROWS_AS(parse_grad_projection("sylvester"), std::invalid_argument);
}

TEST_CASE("an optimizer step projected at the weights before it is orthogonal to every orbit tangent there",
          "[gpt2][projection]") {
  ModelConfig c = gaugelab::test::nano_config();
  c.lrm = LrmPlacement::none();
  for (const bool bias : {false, true}) {
    c.bias = bias;
    GPT m(c, 3);
    const AttentionWeights before = attention_weights(m);
    {  // a step that is not horizontal: random increments of every attention weight
      at::NoGradGuard no_grad;
      auto gen = at::make_generator<at::CPUGeneratorImpl>(17);
      for (Block& b : m.h) {
        b.c_attn.weight.add_(at::randn(b.c_attn.weight.sizes(), gen, b.c_attn.weight.options()), 0.01);
        b.attn_proj.weight.add_(at::randn(b.attn_proj.weight.sizes(), gen, b.attn_proj.weight.options()), 0.01);
        if (bias) b.c_attn.bias.add_(at::randn(b.c_attn.bias.sizes(), gen, b.c_attn.bias.options()), 0.01);
      }
    }
    project_attention_updates(m, before, GradProjection::exact);
    const std::int64_t H = c.n_head, dh = c.head_dim();
    for (std::size_t l = 0; l < m.h.size(); ++l) {
      const at::Tensor d_attn = m.h[l].c_attn.weight - before.w_attn[l], d_proj = m.h[l].attn_proj.weight - before.w_proj[l];
      const at::Tensor d_b = bias ? at::Tensor(m.h[l].c_attn.bias - before.b_attn[l]) : at::Tensor();
      for (std::int64_t i = 0; i < H; ++i) {
        const auto h = gaugelab::test::core_head(before.w_attn[l].to(at::kDouble), bias ? before.b_attn[l].to(at::kDouble) : at::Tensor(),
                                 before.w_proj[l].to(at::kDouble), i, H);
        const auto step = gaugelab::test::core_head(d_attn.to(at::kDouble), bias ? d_b.to(at::kDouble) : at::Tensor(), d_proj.to(at::kDouble), i, H);
        double worst = 0;
        for (std::int64_t a = 0; a < dh * dh; ++a)
          for (int sector = 0; sector < 2; ++sector) {
            core::HeadAlgebra<double> e{core::Mat<double>::Zero(dh, dh), core::Mat<double>::Zero(dh, dh)};
            (sector == 0 ? e.X : e.Y)(a / dh, a % dh) = 1;
            const auto t = core::head_orbit_tangent(h, e);
            worst = std::max(worst, std::abs(core::head_inner(t, step)) /
                                        (std::sqrt(core::head_inner(t, t) * core::head_inner(step, step)) + 1e-30));
          }
        INFO("bias " << bias << " layer " << l << " head " << i);
        // float32 weights: the stored step is rounded at ~1e-7 of the weights (~1e-5 of a 0.01 step)
        CHECK(worst < 1e-3);
      }
    }
  }
}

}  // namespace GAUGELAB_TU
