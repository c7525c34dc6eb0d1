// The front door hands the harness floor a way to read one head of a checkpoint: the GPT-2 tier's
// loader when this build has it, an empty loader otherwise (the harness then says so and fails).
#include "checkpoint_heads.hpp"

namespace gaugelab::cli {

harness::CheckpointHeadLoader checkpoint_head_loader() {
  // The GPT-2 tier's reader (gpt2::load_checkpoint_head) is wired here once it lands.
  return {};
}

}  // namespace gaugelab::cli
