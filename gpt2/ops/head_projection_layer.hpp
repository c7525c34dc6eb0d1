// The per-layer math of the gauge-orthogonal projection and of the gauge-covariant metric of the
// attention heads on raw tensors (seed 001 App. H.2: Alg. 2 and Remark 51): one layer's weights and
// directions in torch's layout. gpt2/model/head_projection.hpp loops it over a model's blocks (and says
// what the group and the metric are); the `gaugelab.torch` gradient hook calls it on a user's model.
// The twin of core/gauge_lie.hpp's head_horizontal_projection (exact) and _approx (Alg. 2).
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "gpt2/ops/grad_projection.hpp"

namespace gaugelab::gpt2 {

const char* grad_projection_name(GradProjection p);             // "none", "approx", "exact"
GradProjection parse_grad_projection(const std::string& name);  // throws std::invalid_argument

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

}  // namespace gaugelab::gpt2
