// GaugeFix-LRM on the model's tensors (seed 000 eqs. 3–6), on the model's device with no host round
// trip: the tensor twin of core/gauge_fix_lrm.hpp and core/coordinates.hpp (lrm_head_scales,
// lrm_drift), tested against them.
//
// Group removed: per layer and head, the scalar Q/K multiplier gauge (ℝ₊)^h,
//   r_Q ↦ r_Q/g, r_K ↦ r_K·g, b_Q ↦ b_Q/g, b_K ↦ b_K·g.
// Representative: s_Q = s_K (s = RMS of the head's multiplier slice), the point of the orbit where
// the head's scale is shared equally by Q and K (drift 0), as seed 000 §3.3 prescribes. The Q/K
// biases move with their multipliers: q_j = r_Q,j·(W̄x)_j + b_Q,j, so only scaling both keeps
// every logit q·k unchanged (exact up to fp32 rounding; a test checks the logits).
// Needs row multipliers (row or row+column) on Q and K: scalar multipliers have no head slices.
#pragma once

#include <functional>

#include <ATen/core/Tensor.h>

#include "core/transport.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// True if Q and K both carry row multipliers (the precondition of everything below).
bool has_qk_row_multipliers(const ModelConfig& config);

/// Per layer and head, s_Q and s_K: RMS of r_Q and r_K over the head's slice. [L, H] float32 each,
/// on the model's device.
struct QkScales {
  at::Tensor s_q;  // [L, H]
  at::Tensor s_k;  // [L, H]
};
QkScales qk_head_scales(const GPT& model);

/// max and mean over layers and heads of |log(s_Q/s_K)| (seed 000 eq. 3 is the max); one host sync.
struct DriftValues {
  double max = 0;
  double mean = 0;
};
DriftValues qk_drift(const QkScales& s);

/// Adam's first and second moments of one parameter (undefined tensors: no state yet).
struct AdamMoments {
  at::Tensor m;  // same shape as the parameter
  at::Tensor v;
};
using MomentLookup = std::function<AdamMoments(const at::Tensor& param)>;

/// Applies GaugeFix to every layer and returns g [L, H] = √((s_Q+ε)/(s_K+ε)) (seed 000 eq. 4).
/// With mode vector or covector the Adam moments of r_Q, r_K and the Q/K slices of c_attn.bias move
/// as core::transport_state moves them under the diagonal right action x ↦ x·a (a = 1/g on Q, g on K):
/// vector m·a, v·a²; covector m/a, v/a²; none leaves them (seed 000's choice).
at::Tensor gauge_fix(GPT& model, double eps, core::TransportMode mode = core::TransportMode::none,
                     const MomentLookup& lookup = {});

/// GaugeFix per coordinate, a variant of B: removes the full diagonal Q/K gauge (ℝ₊)^{d_k} of each head
/// (one g per coordinate j, r_Q,j/g_j, b_Q,j/g_j, r_K,j·g_j, b_K,j·g_j with g_j = √((|r_Q,j|+ε)/(|r_K,j|+ε))),
/// so |r_Q,j| = |r_K,j| everywhere: each q_j·k_j, hence every logit, is unchanged. The representative
/// balances every coordinate rather than the head's RMS (a finer slice of the same orbit family;
/// the core's GL(1)^{d_k} fix). Returns g [L, d]. No Adam state transport.
at::Tensor gauge_fix_coordinates(GPT& model, double eps);

/// The V/O multiplier GaugeFix, a variant of B for the value/output pairing: per head
/// g = √((s_O+ε)/(s_V+ε)) with s_V the RMS of r_V and s_O the RMS of attn c_proj's column multipliers
/// over the head's slice; r_V·g, b_V·g, c_O/g (head_gauge.hpp's V/O pairing) leaves the attention
/// output unchanged and makes s_V = s_O. Needs rows on V and columns on attn_out. Returns g [L, H].
at::Tensor gauge_fix_vo(GPT& model, double eps);
/// True if V carries row multipliers and the attention output column multipliers.
bool has_vo_multipliers(const ModelConfig& config);

/// Condition D's cap (magnitude control, seed 000 §5's proposal): every head whose scale product
/// s_Q·s_K exceeds `cap` has r_Q, b_Q, r_K and b_K all multiplied by f = √(cap/(s_Q·s_K)), so the
/// product becomes `cap` and the ratio s_Q/s_K (GaugeFix's coordinate) is unchanged. Not a gauge move:
/// it scales that head's attention logits by f² (the point of it). Returns the number of heads capped.
std::int64_t cap_qk_product(GPT& model, double cap);

}  // namespace gaugelab::gpt2
