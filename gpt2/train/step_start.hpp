// The loop's first station (step_start.cpp): what every step starts with, before its micro-steps.
#pragma once

#include <cstdint>

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Step `it` (0-based) begun: its row and sampling flags in a fresh StepWork, the profiler's window, the step's
/// RNG (the CPU generator and, on a CUDA device, that device's generator, reseeded from (seed, step, rank): no RNG
/// state needs checkpointing, and a resumed run draws what the uninterrupted one drew), train mode, zeroed
/// gradients.
StepWork begin_step(TrainRun& run, LoopState& loop, std::int64_t it);

}  // namespace gaugelab::gpt2
