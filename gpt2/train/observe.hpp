// The sampled observables of a step (observe.cpp): per-head Q/K scales and drift, the largest attention logit,
// the mean log-partition, on the loop's fixed probe batch.
#pragma once

#include "gpt2/train/loop_state.hpp"

namespace gaugelab::gpt2 {

/// On a sampled step (s.sample): the drift into the row and run.state, the model's observables on loop.probe
/// (evaluation mode, restored), and one /heads record (rank 0). Otherwise the row's observables stay NaN.
void observe_heads(TrainRun& run, const LoopState& loop, StepWork& s);

}  // namespace gaugelab::gpt2
