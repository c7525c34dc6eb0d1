// The front door hands the harness floor a way to read one head of a checkpoint: the GPT-2 tier's
// loader when this build has it, an empty loader otherwise (the harness then says so and fails).
#include "checkpoint_heads.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/inspect/head_loader.hpp"
#endif

namespace gaugelab::cli {

harness::CheckpointHeadLoader checkpoint_head_loader() {
#ifdef GAUGELAB_WITH_TORCH
  return [](const std::string& checkpoint, std::int64_t layer, std::int64_t head) {
    return gpt2::load_checkpoint_head(checkpoint, layer, head);
  };
#else
  return {};
#endif
}

harness::CheckpointInputsLoader checkpoint_inputs_loader() {
#ifdef GAUGELAB_WITH_TORCH
  return [](const std::string& checkpoint, std::int64_t layer, const std::string& data, std::int64_t rows) {
    return gpt2::load_layer_inputs(checkpoint, layer, data, rows);
  };
#else
  return {};
#endif
}

}  // namespace gaugelab::cli
