#include "gpt2/model/head_projection.hpp"

#include <stdexcept>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>

namespace gaugelab::gpt2 {

using at::Tensor;

void require_projectable(const ModelConfig& c) {
  for (LrmSite site : {LrmSite::q, LrmSite::k, LrmSite::v, LrmSite::attn_out})
    if (c.lrm[site] != LrmMode::none)
      throw std::invalid_argument(std::string("the gradient projection needs attention without multipliers, but site ") +
                                  lrm_site_name(site) + " has " + lrm_mode_name(c.lrm[site]) +
                                  " (--multipliers none, or a placement without q, k, v, attn_out)");
  if (c.qk_norm != QkNorm::none) throw std::invalid_argument("the gradient projection needs QK-norm off (it breaks the GL(d_h) gauge)");
}

AttentionWeights attention_weights(const GPT& model) {
  at::NoGradGuard no_grad;
  AttentionWeights w;
  for (const Block& b : model.h) {
    w.w_attn.push_back(b.c_attn.weight.detach().clone());
    w.b_attn.push_back(b.c_attn.bias.defined() ? b.c_attn.bias.detach().clone() : Tensor());
    w.w_proj.push_back(b.attn_proj.weight.detach().clone());
  }
  return w;
}

void project_attention_updates(GPT& model, const AttentionWeights& before, GradProjection mode) {
  if (mode == GradProjection::none) return;
  at::NoGradGuard no_grad;
  for (std::size_t l = 0; l < model.h.size(); ++l) {
    Block& b = model.h[l];
    Tensor d_attn = b.c_attn.weight - before.w_attn[l], d_proj = b.attn_proj.weight - before.w_proj[l];
    Tensor d_battn = b.c_attn.bias.defined() ? b.c_attn.bias - before.b_attn[l] : Tensor();
    project_layer_gradients(before.w_attn[l], before.b_attn[l], before.w_proj[l], d_attn, d_battn, d_proj,
                            model.config().n_head, mode);
    b.c_attn.weight.copy_(before.w_attn[l] + d_attn);
    b.attn_proj.weight.copy_(before.w_proj[l] + d_proj);
    if (d_battn.defined()) b.c_attn.bias.copy_(before.b_attn[l] + d_battn);
  }
}

void project_attention_gradients(GPT& model, GradProjection mode) {
  if (mode == GradProjection::none) return;
  for (Block& b : model.h) {
    Tensor g_attn = b.c_attn.weight.mutable_grad(), g_proj = b.attn_proj.weight.mutable_grad();
    if (!g_attn.defined() || !g_proj.defined()) continue;
    Tensor g_battn = b.c_attn.bias.defined() ? b.c_attn.bias.mutable_grad() : Tensor();
    project_layer_gradients(b.c_attn.weight, b.c_attn.bias, b.attn_proj.weight, g_attn, g_battn, g_proj,
                            model.config().n_head, mode);
  }
}

}  // namespace gaugelab::gpt2
