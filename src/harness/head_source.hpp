// Where `diag heads` gets its attention head: a random GPT-2-shaped head drawn here, or one head of a
// checkpoint through a loader the GPT-2 tier provides (this floor cannot read checkpoints; the front
// door hands the loader down, or an empty one when the build has no GPT-2 tier).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/attention_head.hpp"

namespace gaugelab::harness {

/// Loads head `head` of layer `layer` of a checkpoint directory (ours or a Hugging Face export) as
/// its effective matrices (multipliers merged) in float64, in core::AttentionHead's row-vector
/// convention: W_q, W_k, W_v [d, d_h], W_o [d_h, d], b_q, b_k, b_v [d_h]. Throws std::runtime_error
/// with a one-line message for a bad checkpoint or a layer/head out of range.
using CheckpointHeadLoader =
    std::function<core::AttentionHead<double>(const std::string& checkpoint, std::int64_t layer, std::int64_t head)>;

/// The inputs layer `layer`'s attention sees in a checkpoint's model (its ln_1 outputs) for `rows` tokens of the
/// token file `data`: [rows, d] float64. Same error contract as CheckpointHeadLoader.
using CheckpointInputsLoader = std::function<core::Mat<double>(const std::string& checkpoint, std::int64_t layer,
                                                               const std::string& data, std::int64_t rows)>;

/// What a checkpoint gives the problem besides the head: the teacher (another checkpoint's head at the same layer
/// and head; none: a random teacher) and real inputs (rows [N, d]; empty: N(0, 1) batches).
struct HeadData {
  std::optional<core::AttentionHead<double>> teacher;
  core::Mat<double> rows;  // [N, d]: the batch is the first T rows, warm-up batch t the (t+1)-th block of T
};

/// A random head with GPT-2 shapes and a chosen conditioning.
struct RandomHeadOptions {
  std::int64_t d_model = 768;  // d (GPT-2 124M)
  std::int64_t d_head = 64;    // d_h = d_k = d_v (GPT-2 124M: 768 / 12 heads)
  double cond = 1.0;           // condition number of the d_h×d_h mixing each weight block is multiplied by
  bool biases = true;          // GPT-2 heads have Q/K/V biases; false: all zero
  std::uint64_t seed = 0;      // the draw
};

/// W_q, W_k, W_v = N(0, 1/d)[d, d_h]·C_x and W_o = C_o·N(0, 1/d_h)[d_h, d] with each C = U·diag(σ)·Vᵀ of
/// condition number exactly `cond` (core::random_gl, det ±1), so logits and outputs are O(1) and every
/// block has condition ≈ 1.8·cond (the Gaussian [768, 64] block alone is ≈ 1.8); biases N(0, 0.1²).
/// Throws std::invalid_argument for sizes < 1 or cond < 1.
core::AttentionHead<double> random_head(const RandomHeadOptions& o);

/// Throws the one-line runtime error "this build cannot read checkpoints ..." when `checkpoint` is
/// non-empty and `loader` is empty (front doors call it before printing anything).
void require_loader(const std::string& checkpoint, const CheckpointHeadLoader& loader);

/// The head `diag heads` studies: head `head` of layer `layer` of `checkpoint` through `loader`
/// when `checkpoint` is non-empty, else random_head(random). An empty loader with a checkpoint is
/// a runtime error ("this build cannot read checkpoints"); a loaded head is checked for shapes and
/// finite entries.
core::AttentionHead<double> resolve_head(const std::string& checkpoint, std::int64_t layer, std::int64_t head,
                                         const RandomHeadOptions& random, const CheckpointHeadLoader& loader);

}  // namespace gaugelab::harness
