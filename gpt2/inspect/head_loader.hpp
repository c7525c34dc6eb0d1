// One attention head of a checkpoint as the core's float64 AttentionHead: what `diag heads
// --checkpoint CKPT --layer L --head H` runs the one-step harness on (harness/head_source.hpp's
// CheckpointHeadLoader contract). No LibTorch in this header, so the front door can include it.
#pragma once

#include <cstdint>
#include <string>

#include "core/attention_head.hpp"

namespace gaugelab::gpt2 {

/// Head `head` of layer `layer` of `checkpoint` (our checkpoint directory, or a Hugging Face GPT-2
/// export): effective matrices (multipliers merged, formed in float64), row-vector convention,
/// W_q, W_k, W_v [d, d_h], W_o [d_h, d], b_q, b_k, b_v [d_h]. Throws std::runtime_error with one line
/// naming the checkpoint for an unreadable checkpoint or a layer/head out of range.
core::AttentionHead<double> load_checkpoint_head(const std::string& checkpoint, std::int64_t layer, std::int64_t head);

/// What layer `layer`'s attention sees in the checkpoint's model (its ln_1 outputs, float64) for `rows` tokens of
/// the token file `data` (nanoGPT .bin or llm.c shard), read from the file's start in windows of the model's
/// context (a --compact-vocab model's ids translated): [rows, d]. Throws std::runtime_error with one line for an
/// unreadable checkpoint or file, a layer out of range, too few tokens, or an id outside the model's vocabulary.
core::Mat<double> load_layer_inputs(const std::string& checkpoint, std::int64_t layer, const std::string& data,
                                    std::int64_t rows);

}  // namespace gaugelab::gpt2
