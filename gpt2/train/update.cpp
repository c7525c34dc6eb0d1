// The update station of the loop: projection and clipping of the gradients, the divergence stop, and the
// optimizer's step with the condition's hooks and the update's projection.
#include "gpt2/train/update.hpp"

#include <cmath>
#include <iostream>
#include <limits>

namespace gaugelab::gpt2 {

void clip_gradients(TrainRun& run, const LoopState& loop, StepWork& s) {
  if (!loop.project_update) project_attention_gradients(*run.model, loop.grad_projection);  // a no-op for none
  s.norms = run.opt->clip_grad_norm(run.options.grad_clip);
  s.row.lr = run.schedule.at(s.it);
  s.row.grad_norm = s.norms.total;
  s.row.grad_norm_clipped = s.norms.clipped, s.row.grad_norm_multipliers = s.norms.multipliers;
}

bool stop_if_diverged(TrainRun& run, StepWork& s) {
  const double loss = s.row.loss, grad_norm = s.row.grad_norm;
  if (std::isfinite(loss) && std::isfinite(grad_norm)) return false;
  TrainState& st = run.state;
  st.diverged = true;
  st.stop_reason = std::isfinite(loss) ? "non-finite gradient" : "non-finite loss";
  s.row.spike = true;
  s.row.tokens = static_cast<double>(st.tokens);
  if (run.dist.rank != 0) return true;
  run.log->append(s.row);
  std::cerr << "train: step " << s.row.step << ": non-finite " << (std::isfinite(loss) ? "gradient norm" : "loss")
            << " (loss " << loss << ", grad norm " << grad_norm << "); stopping, "
            << (run.last_checkpoint_step >= 0 ? "the last good checkpoint is kept"
                                               : "no checkpoint was written before it (--ckpt-every)")
            << "\n";
  return true;
}

void apply_update(TrainRun& run, LoopState& loop, StepWork& s) {
  const TrainOptions& o = run.options;
  const std::vector<at::Tensor> before = s.sample ? run.opt->snapshot() : std::vector<at::Tensor>{};
  const StepContext ctx{*run.model, o, s.it, s.inputs, loop.lookup,
                        run.dist.active() ? run.dist.all_reduce_max : nullptr};
  for (const auto& h : loop.hooks) h->before_update(ctx);
  const AttentionWeights weights_before = loop.project_update ? attention_weights(*run.model) : AttentionWeights{};
  run.opt->step(s.row.lr, s.row.lr / o.lr);  // Muon's η follows the same warm-up and cosine
  if (loop.project_update) project_attention_updates(*run.model, weights_before, loop.grad_projection);
  for (const auto& h : loop.hooks) h->correct_update(ctx);  // part of the step (condition E's correction)
  if (s.sample) s.row.update_ratio = run.opt->update_ratios(before);
  for (const auto& h : loop.hooks) s.row.after_fix = h->after_update(ctx) || s.row.after_fix;  // GaugeFix, cap, clip
}

}  // namespace gaugelab::gpt2
