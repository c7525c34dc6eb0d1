// The step's update (update.cpp): gradient projection and clipping, the divergence stop, then the optimizer's
// step with the condition's hooks around it (step_hooks.hpp) and the update's projection.
#pragma once

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Projects the attention gradients (--grad-projection, gradient target) and clips them (--grad-clip); fills
/// s.norms and the row's lr and gradient norms.
void clip_gradients(TrainRun& run, const LoopState& loop, StepWork& s);
/// A non-finite loss or gradient norm: the row is logged as a spike, the reason said in one line, and the run
/// stops before the update (true). The last good checkpoint stays.
bool stop_if_diverged(TrainRun& run, StepWork& s);
/// before_update hooks, the optimizer's step (Muon's η on the same schedule), the update's projection (update
/// target), correct_update hooks, the update-to-weight ratios (sampled steps), after_update hooks (GaugeFix,
/// the cap, QK-Clip: the row's after_fix).
void apply_update(TrainRun& run, LoopState& loop, StepWork& s);

}  // namespace gaugelab::gpt2
