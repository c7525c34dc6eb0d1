// QK-Clip (qk_clip.hpp) and its hook (condition QKclip).
#include "gpt2/train/qk_clip.hpp"

#include <stdexcept>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/stack.h>

#include "gpt2/train/step_hooks.hpp"

namespace gaugelab::gpt2 {

std::int64_t qk_clip(GPT& model, const at::Tensor& logit_max, double tau, const std::string& on) {
  const ModelConfig& cfg = model.config();
  const std::int64_t L = cfg.n_layer, H = cfg.n_head, dh = cfg.head_dim();
  if (logit_max.dim() != 2 || logit_max.size(0) != L || logit_max.size(1) != H)
    throw std::invalid_argument("qk_clip: logit_max must be [n_layer, n_head]");
  if (on != "weights" && on != "multipliers") throw std::invalid_argument("qk_clip: on must be weights or multipliers");
  if (!(tau > 0)) throw std::invalid_argument("qk_clip: tau must be > 0");
  if (on == "multipliers" && !has_qk_row_multipliers(cfg))
    throw std::invalid_argument("qk_clip on the multipliers needs row multipliers on q and k (placement '" +
                                cfg.lrm.spec() + "')");
  at::NoGradGuard no_grad;
  const at::Tensor m = logit_max.to(model.device(), at::kFloat);                     // [L, H]
  const at::Tensor f = (tau / m.clamp_min(tau)).sqrt();                              // [L, H], 1 where <= tau
  const at::Tensor per_coord = f.repeat_interleave(dh, 1);                           // [L, d]
  for (std::int64_t l = 0; l < L; ++l) {
    Block& b = model.h[static_cast<std::size_t>(l)];
    const at::Tensor g = per_coord[l];                                               // [d]
    if (on == "weights") {
      b.w_q().mul_(g.unsqueeze(1));  // rows of W̄_Q [d, d]: the head's q coordinates
      b.w_k().mul_(g.unsqueeze(1));
    } else {
      b.q().r.mul_(g);
      b.k().r.mul_(g);
    }
    if (b.c_attn.bias.defined()) {
      b.b_q().mul_(g);
      b.b_k().mul_(g);
    }
  }
  return (m > tau).sum().item<std::int64_t>();
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
