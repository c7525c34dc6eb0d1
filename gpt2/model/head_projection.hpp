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

namespace gaugelab::gpt2 {

enum class GradProjection { none, approx, exact };
const char* grad_projection_name(GradProjection p);             // "none", "approx", "exact"
GradProjection parse_grad_projection(const std::string& name);  // throws std::invalid_argument

/// Throws std::invalid_argument (naming the reason) unless `config` allows the projection.
void require_projectable(const ModelConfig& config);

/// One layer's gradients replaced by their horizontal parts, in place, in torch's layout:
///   w_attn [3d, d] (c_attn: Q, K, V rows), b_attn [3d] (undefined without biases), w_proj [d, d] (attn c_proj),
///   g_* the gradients of the same shapes. H heads of d/H. Computed in float64, stored in g's dtype.
void project_layer_gradients(const at::Tensor& w_attn, const at::Tensor& b_attn, const at::Tensor& w_proj,
                             at::Tensor& g_attn, at::Tensor& g_battn, at::Tensor& g_proj, std::int64_t heads,
                             GradProjection mode);

/// The gauge-covariant metric of the attention heads, M^{-1/2} applied to one layer's direction in place (same
/// layout as project_layer_gradients). Per head, with W̃ a matrix with its bias row:
///   ‖δ‖²_M = ‖δW̃_q·W̃_kᵀ‖² + ‖W̃_q·δW̃_kᵀ‖² + ‖δW̃_v·W_o‖² + ‖W̃_v·δW_o‖²
/// (how far δ moves the head's two represented maps W̃_qW̃_kᵀ and W̃_vW_o, each factor's move measured through
/// its partner), which every head gauge leaves unchanged: under (W̃_q S, W̃_k S⁻ᵀ) a direction moves as
/// (δW̃_q S, δW̃_k S⁻ᵀ) and S cancels. So M^{-1/2} multiplies the Q block by (W̃_kᵀW̃_k)^{-1/2}, K by
/// (W̃_qᵀW̃_q)^{-1/2}, V by (W_oW_oᵀ)^{-1/2} and O by (W̃_vᵀW̃_v)^{-1/2} (on O's left). Why this metric: the
/// eigenvalues of M^{-1/2}·H·M^{-1/2} are then exactly invariant under the group (H and M transform alike,
/// and the action is linear in θ), which the Euclidean ones are not. Grams must be positive definite.
void metric_inverse_sqrt_layer(const at::Tensor& w_attn, const at::Tensor& b_attn, const at::Tensor& w_proj,
                               at::Tensor& d_attn, at::Tensor& d_battn, at::Tensor& d_proj, std::int64_t heads);

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
