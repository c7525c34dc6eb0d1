// The Q/K imbalance of the effective maps per head, and GaugeFix at the effective-norm representative
// (--gaugefix-mode effective, condition Beff): the tensor twin of core/qk_balance.hpp, tested against it
// in the parity table.
//
// Per layer and head i: n_Q,i, n_K,i = Frobenius norms of head i's rows of the effective maps W_Q,eff,
// W_K,eff [d, d] (every multiplier merged), and ρ_i = log(n_Q,i / n_K,i). Seed 000's drift |log(s_Q/s_K)|
// sees only the row multipliers; ρ also sees W̄ and the column multipliers, so a model balanced by seed
// 000's GaugeFix (drift 0) can still carry a large ρ, which no multiplier-only measure shows.
//
// Group removed by gauge_fix_effective: the per-head scalar Q/K gauge (ℝ₊)^h, r_Q/g, b_Q/g, r_K·g, b_K·g
// (the same pairing as seed 000's GaugeFix, head_gauge.hpp; every logit unchanged). Representative:
// n_Q,i = n_K,i, g_i = √((n_Q,i + ε)/(n_K,i + ε)), instead of GaugeFix's s_Q = s_K. Needs row multipliers
// on q and k (they absorb g); no optimizer-state transport.
#pragma once

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// ρ [L, H] float32 on the model's device: log(n_Q / n_K) per layer and head. Defined for every
/// multiplier placement (none included).
at::Tensor qk_effective_log_ratio(const GPT& model);

/// Moves every head to n_Q = n_K by the multiplier pairing above; returns g [L, H]. Throws
/// std::runtime_error without row multipliers on q and k.
at::Tensor gauge_fix_effective(GPT& model, double eps);

}  // namespace gaugelab::gpt2
