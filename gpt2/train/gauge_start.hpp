// A gauge-offset start: the balanced initialisation moved along the Q/K multiplier gauge orbit.
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
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// Moves every head of `model` along its Q/K multiplier orbit by g_h = exp(σ·z_h) (see above) and
/// returns log g [L, H] (float64, CPU). σ = 0 leaves the model as it is. Needs row multipliers on Q
/// and K (has_qk_row_multipliers); throws std::invalid_argument otherwise or when σ < 0.
at::Tensor offset_qk_gauge(GPT& model, double sigma, std::uint64_t seed);

}  // namespace gaugelab::gpt2
