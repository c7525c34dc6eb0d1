// The loop's first stations (micro_steps.cpp): what every step starts with, then its gradients: every micro-batch's
// forward and backward (eager, or replayed from a CUDA graph), summed into .grad, the loss and gradients averaged
// over the data-parallel ranks.
#pragma once

#include <cstdint>

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Step `it` (0-based) begun: its row and sampling flags in a fresh StepWork, the profiler's window, the step's
/// RNG (the CPU generator and, on a CUDA device, that device's generator, reseeded from (seed, step, rank): no RNG
/// state needs checkpointing, and a resumed run draws what the uninterrupted one drew), train mode, zeroed
/// gradients.
StepWork begin_step(TrainRun& run, LoopState& loop, std::int64_t it);

/// Fills s.row.loss (the step's mean loss over micro-batches and ranks) and s.inputs (the hooks' batch: the last
/// micro-batch, or the unfitted split's when --fit-micro-batch re-split the step). A micro-batch the device
/// cannot hold is one line naming the flags to lower.
void compute_gradients(TrainRun& run, LoopState& loop, StepWork& s);

}  // namespace gaugelab::gpt2
