// The loop's evaluation station (evaluate.cpp): the validation loss over the run's fixed batches, and the
// text sample that follows each evaluation (samples.hpp).
#pragma once

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// Mean validation loss over the fixed batches (ranks share the batches when they divide evenly); NaN when a
/// stop was requested during it.
double evaluate(TrainRun& run);
/// A validation loss as the last one and, when lower, the best (NaN: the last is not measured).
void record_val_loss(TrainState& st, double val_loss);
/// Every --eval-every steps and at the last: the row's validation loss, the best and last in run.state, and
/// (rank 0, --sample-tokens > 0) one greedy sample appended to OUT/samples.txt and printed. A stop during
/// either leaves no partial sample line and marks the step's evaluation pending (run.state.eval_pending).
void evaluate_and_sample(TrainRun& run, const LoopState& loop, StepWork& s);
/// A resumed run whose checkpoint's evaluation was pending (its loss is evaluated by setup_train): the
/// sample of that step, then nothing pending.
void catch_up_sample(TrainRun& run, const LoopState& loop);

}  // namespace gaugelab::gpt2
