// Our own checkpoint: a directory that resumes exactly (float32, multipliers included).
//   DIR/config.json        {"format": "gaugelab-gpt2", "version": 1, "model": {ModelConfig::to_json()},
//                           the vocabulary's keys (vocab_ids.hpp), ...any keys the caller adds (the trainer:
//                           step, data position, RNG, ...)}
//   DIR/model.safetensors  every parameter under its dotted name (GPT::visit), float32, no padding
//                          removed; metadata {"format": "gaugelab-gpt2"}
// The trainer writes further files beside these (optimizer state); loading the model ignores them.
// Every file is written to a temporary name and renamed, so a crash never leaves half a file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/config.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/vocab_ids.hpp"

namespace gaugelab::gpt2 {

inline constexpr const char* kCheckpointFormat = "gaugelab-gpt2";  // the format tag in config.json
inline constexpr int kCheckpointVersion = 1;

/// Writes the checkpoint into `dir` (created if missing; existing files of the same names replaced), with
/// `vocab`, the model's vocabulary: a writer that copies a model passes its source's (ModelDir::vocabulary()), so a --compact-vocab model never loses its id map. `extra` must be a JSON object whose
/// keys are not "format", "version", "model" or the vocabulary's.
void save_checkpoint(const std::string& dir, GPT& model, const Vocabulary& vocab,
                     const nlohmann::json& extra = nlohmann::json::object());

/// The model of the checkpoint in `dir` whose config.json is `config` (read by the caller), onto `device`: the
/// format, version and model section checked, then every tensor of DIR/model.safetensors. Missing, extra or
/// misshapen tensors and unknown format versions are errors naming the file. A directory of either kind read
/// whole (config.json once, the model, the vocabulary): model_dir.hpp's read_model_dir.
std::unique_ptr<GPT> checkpoint_model(const nlohmann::json& config, const std::string& dir, c10::Device device);

/// True if a config.json declares our format (false for a Hugging Face directory's).
bool is_checkpoint_config(const nlohmann::json& config);

/// One line: "12 layers, 12 heads, d 768, context 1024, vocab 50257 (padded 50304); 124.4M parameters + 165888
/// multipliers (...)"; the model verbs, the trainer and inspect print it first.
std::string describe_model(GPT& model);

}  // namespace gaugelab::gpt2
