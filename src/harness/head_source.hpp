// Where `diag heads` gets its attention head: a random GPT-2-shaped head drawn here, or one head of a
// checkpoint through a loader the GPT-2 tier provides (this floor cannot read checkpoints; the front
// door hands the loader down, or an empty one when the build has no GPT-2 tier).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/attention_head.hpp"

namespace gaugelab::harness {

/// Loads head `head` of layer `layer` of a checkpoint directory (ours or a Hugging Face export) as
/// its effective matrices (multipliers merged) in float64, in core::AttentionHead's row-vector
/// convention: W_q, W_k, W_v [d, d_h], W_o [d_h, d], b_q, b_k, b_v [d_h]. Throws std::runtime_error
/// with a one-line message for a bad checkpoint or a layer/head out of range.
using CheckpointHeadLoader =
    std::function<core::AttentionHead<double>(const std::string& checkpoint, std::int64_t layer, std::int64_t head)>;

}  // namespace gaugelab::harness
