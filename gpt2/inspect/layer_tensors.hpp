// Between a GPT-2 model's tensors and the core's float64 attention types, for `gaugelab inspect`:
// reading a layer's effective matrices, moving the model by an element of the layer gauge group
// (the tensor twin of core::apply_layer_gauge, built on head_gauge.hpp), the layers' attention
// inputs, and snapshots so one model serves many transforms.
//
// Conventions: the core uses row vectors (Q = X·W_q, W_q [d, h·d_k]); the model stores torch's
// [out, in] with W_eff = diag(r)·W̄·diag(c) (model/lrm.hpp). The effective matrices are formed in float64
// from the stored W̄, r, c, so extraction adds no rounding of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/attention_layer.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// Layer `layer`'s attention in the core's packed layout, float64, multipliers merged:
/// W_q, W_k, W_v [d, d] (= W_eff rowsᵀ), W_o [d, d] (= W_eff,Oᵀ), b_q, b_k, b_v, b_o [d].
core::AttentionLayer<double> attention_layer(const GPT& model, std::int64_t layer);

/// The tensor twin of core::apply_layer_gauge: per-head Q/K gauges s[i] and V/O gauges c[i]
/// (head_gauge.hpp, absorbed into W̄ with the multipliers kept), then the head permutation.
void apply_layer_gauge(GPT& model, std::int64_t layer, const core::LayerGauge<double>& g);

/// The tensor twin of core::permute_heads (gather: new head j = old head perm[j]): the rows of head
/// slices in W̄_Q, W̄_K, W̄_V, their biases and row multipliers, and the columns of W̄_O and c_O.
/// Scalar and column multipliers of Q/K/V and the row multipliers of O are shared by all heads.
void permute_heads(Block& b, const core::Permutation& perm, std::int64_t head_dim);

/// The inputs each layer's attention sees, ln_1(x_ℓ) [B·T, d] in float64, for token ids idx [B, T]:
/// the model's own forward run on the first ℓ blocks with ln_f swapped for block ℓ's ln_1 (restored after).
std::vector<core::Mat<double>> attention_inputs(GPT& model, const at::Tensor& idx);

/// Logits [B, T, vocab] in the parameters' dtype (float64 models keep float64; GPT::logits casts to float).
at::Tensor model_logits(const GPT& model, const at::Tensor& idx);

/// The last position's logits [B, vocab] only (greedy decoding needs no others), same formula as model_logits.
at::Tensor last_logits(const GPT& model, const at::Tensor& idx);

/// Casts every parameter (in place, as new leaves) to `dtype` (float64 for the exactness tests).
void convert_parameters(GPT& model, c10::ScalarType dtype);

/// Copies of every parameter in visit order, and their restoration (values copied back in place).
std::vector<at::Tensor> snapshot(GPT& model);
void restore(GPT& model, const std::vector<at::Tensor>& saved);

/// Per-coordinate Q and K row scales of a layer (r, or s expanded) and the Q/K biases, float64 [d];
/// empty when Q or K carries no row/scalar multiplier (no LRM Q/K gauge in this model).
struct QkRowScales {
  core::Vec<double> r_q, r_k, b_q, b_k;
};
std::optional<QkRowScales> qk_row_scales(const GPT& model, std::int64_t layer);

/// Eigen <-> tensor (float64 copies).
core::Mat<double> to_mat(const at::Tensor& t);  // [rows, cols]
core::Vec<double> to_vec(const at::Tensor& t);  // [n]
at::Tensor to_tensor(const core::Mat<double>& m);  // [rows, cols] float64 CPU

}  // namespace gaugelab::gpt2
