// The per-layer Q/K (and V/O) multiplier math on raw tensors: one layer's slices in, moved in place.
// The trainer's model-level functions (gpt2/train/gaugefix.hpp and qk_clip.hpp) loop these
// over the blocks, and the PyTorch operators of `gaugelab.torch` (gpt2/torch_library) call the same
// functions on a user's own model: one formula, one place, tested against the core in the parity table.
//
// Layout (torch's [out, in], GPT-2's packed c_attn): for one layer with d = n_embd and H heads of
// d_h = d/H, head h owns coordinates [h·d_h, (h+1)·d_h) of r_Q, r_K, b_Q, b_K (each [d]) and rows of
// that range in W_Q, W_K ([d, d] views of c_attn.weight). Undefined tensors are absent parts (no biases).
// Every function runs without autograd on the inputs' device and dtype.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "core/transport_mode.hpp"

namespace gaugelab::gpt2 {

/// RMS over each head's slice: x [d] -> [H].
at::Tensor head_rms(const at::Tensor& x, std::int64_t heads);

/// The Q/K multiplier pairing per coordinate (core::rescale_qk_multipliers_per_coordinate): r_Q/g, b_Q/g,
/// r_K·g, b_K·g in place. r_q, r_k, g [d]; b_q, b_k [d] or undefined. Every logit q·k is unchanged.
void rescale_qk_pair(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, const at::Tensor& g);

/// GaugeFix of one layer (seed 000 eqs. 3–6). Group removed: the per-head scalar Q/K gauge (ℝ₊)^H.
/// Representative: s_Q = s_K per head (s = RMS of the head's multiplier slice), drift 0, the orbit point
/// where Q and K share the head's scale equally (seed 000 §3.3). Returns g [H] = √((s_Q+ε)/(s_K+ε)).
at::Tensor qk_gauge_fix_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, std::int64_t heads,
                              double eps);

/// The same group at another representative: equal Frobenius norms n_Q = n_K of each head's rows of the
/// effective maps (gaugefix.hpp's ρ = 0). w_q_eff, w_k_eff [d, d]: the effective Q and K rows before the
/// move. Returns g [H] = √((n_Q+ε)/(n_K+ε)).
at::Tensor qk_gauge_fix_effective_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k,
                                        const at::Tensor& w_q_eff, const at::Tensor& w_k_eff, std::int64_t heads,
                                        double eps);

/// Frobenius norm of each head's rows: w [d, in] -> [H].
at::Tensor head_row_norms(const at::Tensor& w, std::int64_t heads);

/// ρ [H] = log(n_Q / n_K) of one layer's effective Q and K rows [d, d] (float32).
at::Tensor qk_effective_log_ratio_layer(const at::Tensor& w_q_eff, const at::Tensor& w_k_eff, std::int64_t heads);

/// The V/O multiplier GaugeFix of one layer (group: per-head scalar V/O gauge (ℝ₊)^H, r_V·g, b_V·g, c_O/g;
/// representative s_V = s_O). r_v [d], b_v [d] or undefined, c_o [d] (attention output's column
/// multipliers). Returns g [H] = √((s_O+ε)/(s_V+ε)).
at::Tensor vo_gauge_fix_layer(at::Tensor& r_v, at::Tensor& b_v, at::Tensor& c_o, std::int64_t heads, double eps);

/// Adam moments of a [d] slice moved with a gauge x ↦ x·a (a [H], one factor per head), as
/// core::transport_state moves them: mode vector m·a, v·a² (like the weights); covector m/a, v/a²
/// (like the gradients); none is refused. m, v: [d] views, or undefined (no state yet).
void transport_head_moments(at::Tensor& m, at::Tensor& v, const at::Tensor& a, std::int64_t heads,
                            core::TransportMode mode);

/// Condition D's cap of one layer: heads with s_Q·s_K > cap get r_Q, b_Q, r_K, b_K multiplied by
/// √(cap/(s_Q·s_K)) (logits scaled: not a gauge move). Returns the number of heads capped, a 0-d tensor.
at::Tensor qk_cap_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, std::int64_t heads,
                        double cap);

/// QK-Clip of one layer (Kimi K2): every head whose largest logit logit_max [H] exceeds tau has its query
/// and key scaled by √(tau/logit_max): x_q, x_k are either W_Q, W_K rows [d, d] or r_Q, r_K [d] (dim 0
/// indexes the coordinates); b_q, b_k [d] or undefined. Returns the number of heads clipped, a 0-d tensor.
at::Tensor qk_clip_layer(at::Tensor& x_q, at::Tensor& x_k, at::Tensor& b_q, at::Tensor& b_k,
                         const at::Tensor& logit_max, double tau);

/// The largest causal attention logit q_i·k_j/√d_h (j ≤ i) of each head over a batch: q, k [B, H, T, d_h]
/// -> [H] float32 on their device; absolute: max |logit| instead of the signed maximum.
at::Tensor attention_logit_max_heads(const at::Tensor& q, const at::Tensor& k, bool absolute);

}  // namespace gaugelab::gpt2
