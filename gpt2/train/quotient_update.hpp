// Condition E: quotient-aware attention updates (seed 003 §3 and §7) as tensor code on the model's
// device, the twin of core/quotient.hpp's correct_qk / correct_vo (tested against them).
//
// Group acted on: per head, the Q/K gauge GL(d_h) (W_Q ↦ W_Q·S, W_K ↦ W_K·S⁻ᵀ) and the V/O gauge
// GL(d_h) (W_V ↦ W_V·T, W_O ↦ T⁻¹·W_O). The optimizer's raw increment U of each head's factor (what
// AdamW or Muon moved it by this step, decay included) is replaced by the opposite-Gram corrected one,
// in the core's row-vector convention (W_Q, W_K, W_V [d, d_h], W_O [d_h, d]):
//   Ũ_Q = U_Q (W_KᵀW_K + λI)⁻¹,  Ũ_K = U_K (W_QᵀW_Q + λI)⁻¹,
//   Ũ_V = U_V (W_O W_Oᵀ + λI)⁻¹,  Ũ_O = (W_VᵀW_V + λI)⁻¹ U_O,
// with the Grams of the factors before the step; diagonal mode keeps only the Grams' diagonals
// (exact for diagonal gauges), and a periodic schedule uses the full Grams every k-th step, the
// diagonal ones between (seed 003 §7). For undamped full-rank GD this makes the represented motion
// ΔM independent of the representative; for Adam or Muon it removes the direct dependence on the
// opposite factor's scale (seed 003 §3).
//
// With learnable multipliers the gauge acts on the effective matrices W_eff = diag(r)·W̄·diag(c), and
// only W̄ is corrected (the multipliers' own increments are left as the optimizer made them): the
// Grams are of the effective factors and the correction is applied to ΔW_eff = diag(r)·ΔW̄·diag(c), so
// ΔW̄ ← diag(r)⁻¹·G⁻¹·diag(r)·ΔW̄ for Q, K, V rows (c cancels) and ΔP̄_h ← ΔP̄_h·diag(c_h)·G⁻¹·diag(c_h)⁻¹
// for the output projection's head columns.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/ops/quotient_layer.hpp"  // QuotientUpdate and the per-layer correction

namespace gaugelab::gpt2 {

/// The stored attention weights before a step: c_attn W̄ [3d, d] and attn c_proj W̄ [d, d] per layer.
struct AttentionSnapshot {
  std::vector<at::Tensor> c_attn, attn_proj;
};
AttentionSnapshot snapshot_attention(const GPT& model);


/// Replaces every head's Q/K (and V/O) increment since `before` by its corrected form, in place
/// (correct_attention_increments_layer on each block).
void correct_attention_increments(GPT& model, const AttentionSnapshot& before, const QuotientUpdate& q);

}  // namespace gaugelab::gpt2
