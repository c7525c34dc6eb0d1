// The tensor gradient projection (gpt2/model/head_projection.hpp) against the core's reference
// (core/gauge_lie.hpp: head_horizontal_projection, Remark 51; head_horizontal_projection_approx, Alg. 2)
// on the same inputs, head by head, with and without biases; the exact result orthogonal to every orbit
// tangent; the configurations it refuses.
#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/randn.h>

#include "core/gauge_lie.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/model/head_projection.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there

using namespace gaugelab::gpt2;
namespace core = gaugelab::core;

namespace {

// float64 throughout on matrices of O(1) entries and size ≤ 33: both implementations agree to ~1e-13;
// a wrong block, sign or transpose shows at O(1).
constexpr double kTol = 1e-10;

struct LayerTensors {
  at::Tensor w_attn, b_attn, w_proj, g_attn, g_battn, g_proj;
};

LayerTensors random_layer(std::int64_t d, bool bias, std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  LayerTensors t;
  t.w_attn = at::randn({3 * d, d}, gen, f64);
  t.w_proj = at::randn({d, d}, gen, f64);
  t.g_attn = at::randn({3 * d, d}, gen, f64);
  t.g_proj = at::randn({d, d}, gen, f64);
  if (bias) {
    t.b_attn = at::randn({3 * d}, gen, f64);
    t.g_battn = at::randn({3 * d}, gen, f64);
  }
  return t;
}

/// Head i of the layer in the core's row-vector convention (biases 0 when undefined).
core::AttentionHead<double> core_head(const at::Tensor& w, const at::Tensor& b, const at::Tensor& p, std::int64_t i,
                                      std::int64_t H) {
  const std::int64_t d = w.size(1), dh = d / H;
  auto rows = [&](std::int64_t s) { return to_mat(w.narrow(0, s * d + i * dh, dh)).transpose().eval(); };  // [d, dh]
  auto bias = [&](std::int64_t s) {
    return b.defined() ? core::RowVec<double>(to_vec(b.narrow(0, s * d + i * dh, dh)).transpose())
                       : core::RowVec<double>::Zero(dh);
  };
  return {rows(0), rows(1), rows(2), to_mat(p.narrow(1, i * dh, dh)).transpose(), bias(0), bias(1), bias(2)};
}

double max_block_diff(const core::AttentionHead<double>& a, const core::AttentionHead<double>& b, bool bias) {
  double m = std::max({(a.W_q - b.W_q).cwiseAbs().maxCoeff(), (a.W_k - b.W_k).cwiseAbs().maxCoeff(),
                       (a.W_v - b.W_v).cwiseAbs().maxCoeff(), (a.W_o - b.W_o).cwiseAbs().maxCoeff()});
  if (bias)
    m = std::max({m, (a.b_q - b.b_q).cwiseAbs().maxCoeff(), (a.b_k - b.b_k).cwiseAbs().maxCoeff(),
                  (a.b_v - b.b_v).cwiseAbs().maxCoeff()});
  return m;
}

}  // namespace

TEST_CASE("the tensor gradient projection equals the core's, head by head", "[gpt2][projection]") {
  struct Case {
    std::int64_t d, heads;
    bool bias;
  };
  std::uint64_t seed = 1;
  for (const Case c : {Case{8, 1, false}, Case{8, 2, true}, Case{12, 3, false}, Case{16, 4, true}, Case{32, 2, true}})
    for (const GradProjection mode : {GradProjection::exact, GradProjection::approx}) {
      const LayerTensors t = random_layer(c.d, c.bias, seed++);
      at::Tensor g_attn = t.g_attn.clone(), g_proj = t.g_proj.clone();
      at::Tensor g_battn = c.bias ? t.g_battn.clone() : at::Tensor();
      project_layer_gradients(t.w_attn, t.b_attn, t.w_proj, g_attn, g_battn, g_proj, c.heads, mode);
      for (std::int64_t i = 0; i < c.heads; ++i) {
        const auto h = core_head(t.w_attn, t.b_attn, t.w_proj, i, c.heads);
        const auto g = core_head(t.g_attn, t.g_battn, t.g_proj, i, c.heads);
        const auto want = mode == GradProjection::exact ? core::head_horizontal_projection(h, g)
                                                        : core::head_horizontal_projection_approx(h, g);
        const auto got = core_head(g_attn, g_battn, g_proj, i, c.heads);
        INFO("d " << c.d << " heads " << c.heads << " bias " << c.bias << " mode " << grad_projection_name(mode));
        CHECK(max_block_diff(got, want, c.bias) < kTol);
        if (mode == GradProjection::exact) {  // orthogonal to the orbit tangent of every basis element
          const std::int64_t dh = c.d / c.heads;
          double worst = 0;
          for (std::int64_t a = 0; a < dh * dh; ++a)
            for (int sector = 0; sector < 2; ++sector) {
              core::HeadAlgebra<double> e{core::Mat<double>::Zero(dh, dh), core::Mat<double>::Zero(dh, dh)};
              (sector == 0 ? e.X : e.Y)(a / dh, a % dh) = 1;
              worst = std::max(worst, std::abs(core::head_inner(core::head_orbit_tangent(h, e), got)));
            }
          CHECK(worst < kTol);
        }
      }
    }
}

TEST_CASE("the projection refuses attention multipliers and QK-norm, and none leaves gradients alone", "[gpt2][projection]") {
  ModelConfig c = gaugelab::test::nano_config();  // default placement: rows+columns on q, k, v, attn_out
  CHECK_THROWS_AS(require_projectable(c), std::invalid_argument);
  c.lrm = LrmPlacement::parse("mlp_in:row,mlp_out:column");
  CHECK_NOTHROW(require_projectable(c));
  c.qk_norm = QkNorm::rms;
  CHECK_THROWS_AS(require_projectable(c), std::invalid_argument);
  const LayerTensors t = random_layer(8, false, 99);
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
        const auto h = core_head(before.w_attn[l].to(at::kDouble), bias ? before.b_attn[l].to(at::kDouble) : at::Tensor(),
                                 before.w_proj[l].to(at::kDouble), i, H);
        const auto step = core_head(d_attn.to(at::kDouble), bias ? d_b.to(at::kDouble) : at::Tensor(), d_proj.to(at::kDouble), i, H);
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
