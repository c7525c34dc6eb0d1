// The QK-Clip hook (condition QKclip, hook_qk_clip.hpp): after every step, the logits recomputed on the step's last
// micro-batch (the max over the ranks when data parallel) and every head over --qk-clip-tau clipped (qk_clip.hpp).
#include "gpt2/train/hook_qk_clip.hpp"

#include "gpt2/train/qk_clip.hpp"
#include "gpt2/train/step_hook.hpp"

namespace gaugelab::gpt2 {

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
