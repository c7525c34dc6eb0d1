// QK-Clip (qk_clip.hpp); its hook (condition QKclip) is hook_qk_clip.cpp.
#include "gpt2/train/qk_clip.hpp"

#include <stdexcept>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/stack.h>

#include "gpt2/ops/qk_layer.hpp"
#include "gpt2/train/gaugefix.hpp"  // has_qk_row_multipliers

namespace gaugelab::gpt2 {

std::int64_t qk_clip(GPT& model, const at::Tensor& logit_max, double tau, QkClipOn on) {
  const ModelConfig& cfg = model.config();
  const std::int64_t L = cfg.n_layer, H = cfg.n_head;
  if (logit_max.dim() != 2 || logit_max.size(0) != L || logit_max.size(1) != H)
    throw std::invalid_argument("qk_clip: logit_max must be [n_layer, n_head]");
  if (!(tau > 0)) throw std::invalid_argument("qk_clip: tau must be > 0");
  if (on == QkClipOn::multipliers && !has_qk_row_multipliers(cfg))
    throw std::invalid_argument("qk_clip on the multipliers needs row multipliers on q and k (placement '" +
                                cfg.lrm.spec() + "')");
  std::vector<at::Tensor> clipped;
  for (std::int64_t l = 0; l < L; ++l) {
    Block& b = model.h[static_cast<std::size_t>(l)];
    at::Tensor xq = on == QkClipOn::weights ? b.w_q() : b.q().r;  // rows of W̄_Q [d, d] or r_Q [d]: the head's q coordinates
    at::Tensor xk = on == QkClipOn::weights ? b.w_k() : b.k().r;
    at::Tensor bq = b.c_attn.bias.defined() ? b.b_q() : at::Tensor(), bk = b.c_attn.bias.defined() ? b.b_k() : at::Tensor();
    clipped.push_back(qk_clip_layer(xq, xk, bq, bk, logit_max[l], tau));
  }
  return at::stack(clipped).sum().item<std::int64_t>();
}

}  // namespace gaugelab::gpt2
