// The trainer's checkpoints: the newest that loads, and writing the checkpoint of a step (the loop's last station,
// checkpoint_or_stop). Where they lie in the run directory, which are complete, and the line that says from which
// one a failed run continues: run_dir.hpp.
//
//   OUT/checkpoints/step_00001000/      one checkpoint per saved step, the newest `keep` kept
//       config.json                     {"format": "gaugelab-gpt2", "model": ..., "trainer": {step, tokens,
//                                        options, spike window, best/last val loss, vocab ids, ...}}
//       model.safetensors               every parameter, float32 (gpt2/model/checkpoint.hpp)
//       optimizer.safetensors           AdamW state: m/<param>, v/<param>, step/<param> (float32)
// Every checkpoint is written into .tmp-step_* and renamed into place when complete, so any step_* directory is
// whole (a crash leaves only .tmp-*).
// RNG: the trainer reseeds the CPU generator from (seed, step, rank) before every step and the data
// order is a pure function of (seed, step, rank) (data_loader.hpp), so the step is the whole position.
// Each checkpoint is also a model checkpoint `gaugelab eval/generate/export` read directly. What a resumed run must
// share with the checkpoint it continues: resume.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/train/optimizer.hpp"
#include "gpt2/train/run_state.hpp"

namespace gaugelab::gpt2 {

/// Writes the checkpoint of `step` atomically (temporary directory + rename), then removes all but
/// the newest `keep` checkpoints. `vocab` is the run's (its --compact-vocab map), `trainer` is stored under
/// config.json's "trainer" key.
void save_train_checkpoint(const std::string& out, std::int64_t step, GPT& model, const TrainOptimizer& opt,
                           const Vocabulary& vocab, const nlohmann::json& trainer, std::int64_t keep);

/// The newest checkpoint of the run in `out` whose model and optimizer state both load, with them loaded (none when
/// the run has no checkpoint). A damaged newer one is skipped with a line saying so and, once an older one has
/// loaded, renamed to damaged-step_* beside it. None loading is an error.
std::tuple<std::optional<std::string>, std::optional<ModelDir>, std::optional<safetensors::File>>
newest_loadable_checkpoint(const std::string& out, c10::Device device, bool rank0);

/// The trainer state a checkpoint carries besides model and optimizer (config.json "trainer"), and back.
nlohmann::json train_state_json(const TrainRun& run);
TrainState train_state_from_json(const nlohmann::json& j);

/// Checkpoint of the current step (rank 0 writes; every rank waits for it). Sets last_checkpoint_step: on
/// rank 0 once its files are in place, on the others once the wait says rank 0 got there.
void save_state(TrainRun& run);

/// The loop's last station: a checkpoint at every --ckpt-every step, at the last step and when a stop was
/// requested (SIGTERM/SIGINT on any rank: all ranks stop together); none with --ckpt-every 0. Returns true when
/// the run stops here.
bool checkpoint_or_stop(TrainRun& run, int signal, std::int64_t step, bool last);

}  // namespace gaugelab::gpt2
