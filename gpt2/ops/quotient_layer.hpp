// Condition E's opposite-Gram correction of one layer's attention increments on raw tensors (seed 003
// §3, §7), the twin of core/quotient.hpp's correct_qk / correct_vo. gpt2/train/quotient_update.hpp loops
// it over the model's blocks (and explains the multiplier coordinates); the `gaugelab.torch` optimizer
// wrapper calls it on a user's model. Group acted on: per head GL(d_h) on Q/K (W_Q·S, W_K·S⁻ᵀ) and on
// V/O (W_V·T, T⁻¹·W_O).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace gaugelab::gpt2 {

struct QuotientUpdate {
  bool full = true;      // full Grams (else their diagonals)
  double damping = 1e-3; // λ added to each Gram
  bool vo = true;        // also correct the V/O pair (else Q/K only)
  bool match_rms = false;  // rescale each head's corrected pair (Q with K, V with O) by one factor shared by the
                           // pair, to the RMS of the pair's raw increments: the corrected direction at the
                           // optimizer's step size, gauge compatibility kept (quotient_layer.cpp)
};

/// The multipliers of one layer's attention maps, each [d] or undefined (then ones): row and column
/// scales of Q, K, V (c_attn's groups) and of the output projection O (scalar multipliers expanded to [d]).
struct AttentionMultipliers {
  at::Tensor r_q, c_q, r_k, c_k, r_v, c_v, r_o, c_o;
};

/// Replaces the increments w_attn − w_attn_before ([3d, d], c_attn: Q, K, V rows) and w_proj − w_proj_before
/// ([d, d], attn c_proj) of one layer by their corrected forms, in place: W̄ ← W̄_before + Ũ, with the Grams
/// of the effective factors before the step (heads: H).
void correct_attention_increments_layer(at::Tensor& w_attn, const at::Tensor& w_attn_before, at::Tensor& w_proj,
                                        const at::Tensor& w_proj_before, const AttentionMultipliers& m,
                                        std::int64_t heads, const QuotientUpdate& q);

}  // namespace gaugelab::gpt2
