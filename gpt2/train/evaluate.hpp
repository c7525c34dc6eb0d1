// The loop's evaluation station (evaluate.cpp): the validation loss over the run's fixed batches, and the
// text sample that follows each evaluation.
//
// Text samples during training (as llm.c prints them, and as researchers expect to watch a run learn):
// after each evaluation rank 0 continues a fixed prompt greedily and appends the text to OUT/samples.txt.
//
//   step 250: <prompt>|<continuation>
//
// The prompt is the start of the first validation window (the same at every evaluation); greedy decoding
// draws no random numbers, so sampling never changes the training trajectory (resume stays exact).
// Decoded with the GPT-2 tokenizer when its ranks file is installed, else written as token ids.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/tokenizer.hpp"
#include "gpt2/model/model.hpp"
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

// ---- Text samples ----

/// OUT/samples.txt
std::string train_samples_path(const std::string& out);

/// Keeps the lines of `path` whose step is <= `step` (all of them when it does not exist): a fresh run
/// (step 0) empties it, a resumed one drops what its interrupted predecessor sampled after the checkpoint.
void keep_samples_up_to(const std::string& path, std::int64_t step);

/// Appends `line` and a newline to `path`; a failed write is one line naming the file and the error.
void append_sample_line(const std::string& path, const std::string& line);

/// Greedy continuation of `prompt` (model ids, [T]) by `tokens` tokens; the context is cropped to the
/// model's block size. Returns the new ids only (fewer when a stop was requested: io/stop_signal.hpp).
/// No gradients; the model's train/eval mode is restored.
std::vector<std::int64_t> greedy_continue(GPT& model, const std::vector<std::int64_t>& prompt, std::int64_t tokens);

/// One line "step N: prompt|continuation" with model ids mapped to GPT-2 ids through `vocab_ids`
/// (empty: the model speaks GPT-2 ids) and decoded by `tok` when given (ids otherwise); newlines shown as \n.
std::string sample_line(std::int64_t step, const std::vector<std::int64_t>& prompt,
                        const std::vector<std::int64_t>& continuation, const std::vector<std::int32_t>& vocab_ids,
                        const data::Gpt2Tokenizer* tok);

}  // namespace gaugelab::gpt2
