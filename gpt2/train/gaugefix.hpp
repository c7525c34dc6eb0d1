// The Q/K (and V/O) multiplier gauge on the model's tensors, on the model's device with no host round trip:
// measured (s_Q, s_K, the drift; ρ of the effective maps), removed at either representative (seed 000's GaugeFix,
// per head or per coordinate; the effective-norm GaugeFix of condition Beff), offset at the start, and capped
// (condition D). The tensor twin of core/gauge_fix_lrm.hpp, core/coordinates.hpp (lrm_head_scales, lrm_drift) and
// core/qk_balance.hpp, tested against them in the parity table.
//
// Group removed by gauge_fix: per layer and head, the scalar Q/K multiplier gauge (ℝ₊)^h,
//   r_Q ↦ r_Q/g, r_K ↦ r_K·g, b_Q ↦ b_Q/g, b_K ↦ b_K·g.
// Representative: s_Q = s_K (s = RMS of the head's multiplier slice), the point of the orbit where
// the head's scale is shared equally by Q and K (drift 0), as seed 000 §3.3 prescribes. The Q/K
// biases move with their multipliers: q_j = r_Q,j·(W̄x)_j + b_Q,j, so only scaling both keeps
// every logit q·k unchanged (exact up to fp32 rounding; a test checks the logits).
// Needs row multipliers (row or row+column) on Q and K: scalar multipliers have no head slices.
#pragma once

#include <cstdint>
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

// ---- The effective-norm representative (--gaugefix-mode effective, condition Beff) ----
//
// Per layer and head i: n_Q,i, n_K,i = Frobenius norms of head i's rows of the effective maps W_Q,eff,
// W_K,eff [d, d] (every multiplier merged), and ρ_i = log(n_Q,i / n_K,i). Seed 000's drift |log(s_Q/s_K)|
// sees only the row multipliers; ρ also sees W̄ and the column multipliers, so a model balanced by seed
// 000's GaugeFix (drift 0) can still carry a large ρ, which no multiplier-only measure shows.
//
// Group removed by gauge_fix_effective: the same per-head scalar Q/K gauge (ℝ₊)^h and pairing as gauge_fix
// (head_gauge.hpp; every logit unchanged). Representative: n_Q,i = n_K,i, g_i = √((n_Q,i + ε)/(n_K,i + ε)),
// instead of GaugeFix's s_Q = s_K. Needs row multipliers on q and k (they absorb g); no optimizer-state transport.

/// ρ [L, H] float32 on the model's device: log(n_Q / n_K) per layer and head. Defined for every
/// multiplier placement (none included).
at::Tensor qk_effective_log_ratio(const GPT& model);

/// Moves every head to n_Q = n_K by the multiplier pairing above; returns g [L, H]. Throws
/// std::runtime_error without row multipliers on q and k.
at::Tensor gauge_fix_effective(GPT& model, double eps);

// ---- A gauge-offset start: the balanced initialisation moved along the same orbit (--qk-gauge-init) ----
//
// Why. With every multiplier starting at 1 (the LRM protocol) the Q/K multipliers of a head receive
// equal gradients (∂L/∂r_Q,j = r_K,j·A_j and ∂L/∂r_K,j = r_Q,j·A_j with the same A_j), and AdamW, its
// weight decay included, keeps them equal: in exact arithmetic the Q/K drift stays 0 for conditions A and
// C and GaugeFix (B) has nothing to remove, so B ≡ C up to rounding. A start off the balanced slice
// gives the gauge handlings something to act on while leaving the function at step 0 unchanged.
//
// Group acted on: per layer and head, the scalar Q/K multiplier gauge (ℝ₊)^h that GaugeFix removes
// (seed 000 §3.2): r_Q,h ↦ r_Q,h/g_h, r_K,h ↦ r_K,h·g_h (b_Q, b_K with them), g_h = exp(σ·z_h),
// z_h ~ N(0, 1) drawn from the run seed. Every logit is unchanged (a test checks them); the head's
// drift |log(s_Q/s_K)| becomes 2σ|z_h|.

/// Moves every head of `model` along its Q/K multiplier orbit by g_h = exp(σ·z_h) (see above) and
/// returns log g [L, H] (float64, CPU). σ = 0 leaves the model as it is. Needs row multipliers on Q
/// and K (has_qk_row_multipliers); throws std::invalid_argument otherwise or when σ < 0.
at::Tensor offset_qk_gauge(GPT& model, double sigma, std::uint64_t seed);

}  // namespace gaugelab::gpt2
