// Gauge moves on a GPT-2 block's tensors, in place: the tensor twins of the core's reference math
// (core/attention_head.hpp, core/attention_layer.hpp, core/lrm_gauge.hpp), tested against it.
//
// Conventions. The core uses row vectors (Q = X·W_q, W_q [d, d_k]); our weights are torch's
// [out, in], W = W_qᵀ, and the effective matrix is W_eff = diag(r)·W̄·diag(c) (lrm.hpp). A head gauge
// acts on W_eff; W̄ absorbs it with the multipliers kept (r, c nonzero), so the move is exact for any
// placement:  W_eff,h ← M·W_eff,h  ⇔  W̄_h ← diag(1/r_h)·M·diag(r_h)·W̄_h.
// Head h owns rows slice(h) of W_Q, W_K, W_V (and of b_Q, b_K, b_V, r_Q, r_K, r_V) and columns
// slice(h) of W_O (and of c_O); see GPT::head_slice.
// The functions work in float64 and store back in the parameters' dtype; gradients are not tracked.
#pragma once

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// Rows of head `hs` in the Q (site q), K (k) or V (v) projection: W_eff,h ← M·W_eff,h, b_h ← M·b_h.
/// M [dh, dh].
void transform_head_rows(Block& b, LrmSite site, HeadSlice hs, const at::Tensor& m);
/// Columns of head `hs` in the attention output projection: W_eff,O[:, h] ← W_eff,O[:, h]·M. M [dh, dh].
void transform_head_out_columns(Block& b, HeadSlice hs, const at::Tensor& m);

/// Query–key gauge S ∈ GL(d_h) of one head (seed 001 Prop. 12; core::apply_qk_gauge):
/// (W_q, b_q, W_k, b_k) ↦ (W_q·S, b_q·S, W_k·S⁻ᵀ, b_k·S⁻ᵀ) in the row-vector convention, i.e.
/// Q rows ← Sᵀ·(Q rows), K rows ← S⁻¹·(K rows) here. Logits are unchanged. S [dh, dh].
void apply_qk_gauge(Block& b, HeadSlice hs, const at::Tensor& s);
/// Value–output gauge C ∈ GL(d_h) (core::apply_vo_gauge): (W_v, b_v, W_o) ↦ (W_v·C, b_v·C, C⁻¹·W_o),
/// i.e. V rows ← Cᵀ·(V rows), O columns ← (O columns)·C⁻ᵀ here. C [dh, dh].
void apply_vo_gauge(Block& b, HeadSlice hs, const at::Tensor& c);

/// Q/K multiplier pairing per coordinate (core::rescale_qk_multipliers_per_coordinate):
/// r_Q/g, b_Q/g, r_K·g, b_K·g. Needs row multipliers on Q and K. g [d], nonzero.
void rescale_qk_multipliers(Block& b, const at::Tensor& g);
/// V/O pairing (core::rescale_vo_multipliers): r_V·g, b_V·g, c_O/g. Needs rows on V, columns on O. g [d].
void rescale_vo_multipliers(Block& b, const at::Tensor& g);
/// LayerNorm/next-columns pairing (core::rescale_ln_columns) for ln_1 (consumers Q, K, V) or ln_2
/// (consumer c_fc): gain·g, bias·g, every consumer's c/g. Needs column multipliers on every consumer.
void rescale_ln_columns(Block& b, int which_ln, const at::Tensor& g);

}  // namespace gaugelab::gpt2
