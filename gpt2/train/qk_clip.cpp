// QK-Clip (qk_clip.hpp) and its hook (condition QKclip).
#include "gpt2/train/qk_clip.hpp"

#include <stdexcept>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/stack.h>

#include "gpt2/ops/qk_layer.hpp"
#include "gpt2/train/step_hooks.hpp"

namespace gaugelab::gpt2 {

std::int64_t qk_clip(GPT& model, const at::Tensor& logit_max, double tau, const std::string& on) {
  const ModelConfig& cfg = model.config();
  const std::int64_t L = cfg.n_layer, H = cfg.n_head;
  if (logit_max.dim() != 2 || logit_max.size(0) != L || logit_max.size(1) != H)
    throw std::invalid_argument("qk_clip: logit_max must be [n_layer, n_head]");
  if (on != "weights" && on != "multipliers") throw std::invalid_argument("qk_clip: on must be weights or multipliers");
  if (!(tau > 0)) throw std::invalid_argument("qk_clip: tau must be > 0");
  if (on == "multipliers" && !has_qk_row_multipliers(cfg))
    throw std::invalid_argument("qk_clip on the multipliers needs row multipliers on q and k (placement '" +
                                cfg.lrm.spec() + "')");
  std::vector<at::Tensor> clipped;
  for (std::int64_t l = 0; l < L; ++l) {
    Block& b = model.h[static_cast<std::size_t>(l)];
    at::Tensor xq = on == "weights" ? b.w_q() : b.q().r;  // rows of W̄_Q [d, d] or r_Q [d]: the head's q coordinates
    at::Tensor xk = on == "weights" ? b.w_k() : b.k().r;
    at::Tensor bq = b.c_attn.bias.defined() ? b.b_q() : at::Tensor(), bk = b.c_attn.bias.defined() ? b.b_k() : at::Tensor();
    clipped.push_back(qk_clip_layer(xq, xk, bq, bk, logit_max[l], tau));
  }
  return at::stack(clipped).sum().item<std::int64_t>();
}

namespace {

class QkClipHook : public StepHook {
 public:
  bool after_update(const StepContext& c) override {
    const bool was_training = c.model.training();
    c.model.train(false);  // the logits as the function computes them (no dropout)
    at::Tensor s_max = c.model.attention_logit_max(c.inputs, /*absolute=*/false);  // [L, H]
    c.model.train(was_training);
    if (c.reduce_max) c.reduce_max(s_max);  // data parallel: the max over every rank's batch, one clip for all
    return qk_clip(c.model, s_max, c.options.qk_clip_tau, c.options.qk_clip_on) > 0;
  }
};

}  // namespace

std::unique_ptr<StepHook> make_qk_clip_hook(const TrainOptions&) { return std::make_unique<QkClipHook>(); }

}  // namespace gaugelab::gpt2
