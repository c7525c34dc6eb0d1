// The step's gradients (micro_steps.cpp): every micro-batch's forward and backward (eager, or replayed from a
// CUDA graph), summed into .grad, the loss and gradients averaged over the data-parallel ranks.
#pragma once

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Fills s.row.loss (the step's mean loss over micro-batches and ranks) and s.inputs (the hooks' batch: the last
/// micro-batch, or the unfitted split's when --fit-micro-batch re-split the step). A micro-batch the device
/// cannot hold is one line naming the flags to lower.
void compute_gradients(TrainRun& run, LoopState& loop, StepWork& s);

}  // namespace gaugelab::gpt2
