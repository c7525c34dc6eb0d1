// The loop's bookkeeping after a step (progress.cpp): the spike rule, tokens and timing, the log row, the
// slowdown warning, and the progress line llm.c prints every step.
#pragma once

#include <limits>

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Closes the step's row: spike rule, tokens, tokens/s and the step-time EMA, a warning when steps have become
/// much slower than their best, the row appended to the log (rank 0); advances run.state.step.
void end_step(TrainRun& run, LoopState& loop, StepWork& s);
/// "step N/M | loss | lr | gnorm | drift | tok/s | MFU | ETA [| val]" on the first step of this process, every
/// --log-every steps and the last (rank 0).
void print_progress(const TrainRun& run, const LoopState& loop, const StepWork& s);

}  // namespace gaugelab::gpt2
