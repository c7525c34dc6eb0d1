// A model directory read once: config.json parsed a single time, its format decided there (our checkpoint,
// checkpoint.hpp, or a Hugging Face GPT-2 export, interchange.hpp), the model built from it, and the vocabulary
// (vocab_ids.hpp) taken from the same JSON. Every reader of a model directory reads through it: the trainer
// (--resume, --init-from), eval, generate, export, import and inspect.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/config.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/vocab_ids.hpp"

namespace gaugelab::gpt2 {

/// The formats a reader takes: our checkpoints alone (the trainer's --resume), a Hugging Face export alone
/// (import), or either kind.
enum class ModelDirKinds { checkpoint, hugging_face, any };

struct ModelDir {
  std::string dir;
  nlohmann::json config;          // the whole DIR/config.json (our checkpoint: the trainer reads its own keys)
  bool checkpoint = false;        // our format; false: a Hugging Face export
  std::unique_ptr<GPT> model;
  std::int64_t vocab_size = 0;    // the model's token rows, kept when the model is moved out
  /// The vocabulary config.json records for the model (vocabulary_of); its one-line errors name DIR/config.json.
  Vocabulary vocabulary() const;
};

/// Reads DIR onto `device`: our checkpoint (checkpoint_model), or with `accept` hugging_face or any, a Hugging Face
/// directory (imported with `lrm_for_hf` multipliers at 1). With `accept` any, DIR must be a directory. Errors are
/// one line naming the file.
ModelDir read_model_dir(const std::string& dir, c10::Device device, ModelDirKinds accept = ModelDirKinds::any,
                        const LrmPlacement& lrm_for_hf = LrmPlacement{});

}  // namespace gaugelab::gpt2
