// The trainer's run directory and its resume checkpoints.
//
//   OUT/log.h5                          the HDF5 run log (kind "gpt2/train", train_log.hpp)
//   OUT/checkpoints/step_00001000/      one checkpoint per saved step, the newest `keep` kept
//       config.json                     {"format": "gaugelab-gpt2", "model": ..., "trainer": {step, tokens,
//                                        options, spike window, best/last val loss, vocab ids, ...}}
//       model.safetensors               every parameter, float32 (gpt2/model/checkpoint.hpp)
//       optimizer.safetensors           AdamW state: m/<param>, v/<param>, step/<param> (float32)
//   OUT/checkpoints/.tmp-step_00001000/ a checkpoint being written; renamed into place when complete,
//                                       so any step_* directory is whole (a crash leaves only .tmp-*)
// RNG: the trainer reseeds the CPU generator from (seed, step, rank) before every step and the data
// order is a pure function of (seed, step, rank) (data_loader.hpp), so the step is the whole position.
// Each checkpoint is also a model checkpoint `gaugelab eval/generate/export` read directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/train/optimizer.hpp"

namespace gaugelab::gpt2 {

std::string train_log_path(const std::string& out);         // OUT/log.h5
std::string train_checkpoints_dir(const std::string& out);  // OUT/checkpoints
std::string train_checkpoint_name(std::int64_t step);       // step_00001000

/// Writes the checkpoint of `step` atomically (temporary directory + rename), then removes all but
/// the newest `keep` checkpoints. `vocab` is the run's (its --compact-vocab map), `trainer` is stored under
/// config.json's "trainer" key.
void save_train_checkpoint(const std::string& out, std::int64_t step, GPT& model, const TrainOptimizer& opt,
                           const Vocabulary& vocab, const nlohmann::json& trainer, std::int64_t keep);

/// The newest complete checkpoint directory of a run, if any (leftover .tmp-* directories are removed).
std::optional<std::string> latest_train_checkpoint(const std::string& out);

/// The complete checkpoint directories of a run, newest first.
std::vector<std::string> train_checkpoints_newest_first(const std::string& out);

/// Restores the optimizer state saved beside a checkpoint's model.
void load_optimizer_state(const std::string& checkpoint_dir, TrainOptimizer& opt);

}  // namespace gaugelab::gpt2
