// Gauge-orthogonal gradients of the attention heads (seed 001 App. H.2: Alg. 2 and Remark 51) as tensor
// code on the model's device, the twin of core/gauge_lie.hpp's head_horizontal_projection (exact) and
// head_horizontal_projection_approx (Alg. 2), tested against them on the same inputs.
//
// Group: per head, GL(d_h) on the Q/K pair and GL(d_h) on the V/O pair (biases move with their
// matrices). Its orbit tangents at the current weights are the directions that change no function; a
// gradient of the loss is already orthogonal to them (Prop. 38), but what reaches the optimizer after
// clipping, data parallelism or bf16 rounding need not be, and a projection removes the vertical part
// before the optimizer turns it into a step. exact: the Euclidean-orthogonal projection, one Sylvester
// solve per head and sector in the Grams' eigenbases (minimum-norm where the Grams are singular);
// approx: Alg. 2's average of the two least-squares estimates (cheaper; exact only on vertical vectors).
//
// Defined on the plain weights: the attention sites (q, k, v, attn_out) must carry no learnable
// multipliers (with them the metric and the tangents live in W̄ = diag(r)⁻¹·W_eff·diag(c)⁻¹ coordinates,
// which the seed does not treat), and QK-norm must be off (it breaks the GL(d_h) gauge).
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/ops/head_projection_layer.hpp"  // GradProjection and the per-layer math

namespace gaugelab::gpt2 {

/// Throws std::invalid_argument (naming the reason) unless `config` allows the projection.
void require_projectable(const ModelConfig& config);

/// Copies of every layer's attention weights (c_attn weight and bias, attn_proj weight) before a step.
struct AttentionWeights {
  std::vector<at::Tensor> w_attn, b_attn, w_proj;
};
AttentionWeights attention_weights(const GPT& model);

/// Every layer's attention step since `before` (W − W_before) replaced by its horizontal part at W_before:
/// the optimizer's update made gauge-orthogonal, in place.
void project_attention_updates(GPT& model, const AttentionWeights& before, GradProjection mode);

/// Every layer's attention gradients (the .grad() of c_attn's weight and bias, attn_proj's weight) projected.
/// A no-op for GradProjection::none; layers whose gradients are undefined are skipped.
void project_attention_gradients(GPT& model, GradProjection mode);

}  // namespace gaugelab::gpt2
