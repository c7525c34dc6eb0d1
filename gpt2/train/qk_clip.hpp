// QK-Clip (Kimi K2, arXiv 2507.20534 §2.1, the "MuonClip" clip, here after any optimizer): after the
// step, every head h whose largest attention logit S_max,h = max_{i>=j} q_i·k_j/√d_h on the step's
// batch exceeds τ has its query and key scaled by √γ_h each, γ_h = τ/S_max,h, so that head's logits are
// scaled by γ_h and the largest becomes τ. Not a gauge move: it changes the function (the point of it),
// only for heads over τ; the others are untouched.
//
// Where the source is silent, chosen here (flags):
//   - which tensors carry the factor (--qk-clip-on): weights (Kimi K2: the head's rows of W̄_Q and W̄_K,
//     with the head's Q/K biases, so q and k scale exactly) or multipliers (r_Q, r_K and the biases:
//     the same function; the multipliers, not the matrices, then carry the clip). The Adam state is left
//     as it is in both (Kimi K2 rescales weights only).
//   - which logits: recomputed on the step's last micro-batch with the weights just updated, so that
//     after the clip every logit of that batch is <= τ (Kimi K2 takes S_max from the step's own forward
//     pass, before the update). The cost is one forward pass without gradients per step.
//   - S_max is the signed maximum (Kimi K2's definition), not max |logit| (the logged quantity).
// Data parallel: S_max is the maximum over every rank's batch (a max all-reduce), so every rank applies
// the same clip and the ranks' weights stay equal.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/train/choices.hpp"

namespace gaugelab::gpt2 {

/// Scales the query and key of every head whose largest logit logit_max[l][h] ([L, H], any device)
/// exceeds tau by √(tau / logit_max) each: on the head's rows of W̄_Q, W̄_K (on weights) or its
/// slices of r_Q, r_K (on multipliers, needs row multipliers on q and k), and in both cases its
/// slices of b_Q, b_K. Returns the number of heads clipped (one host sync).
std::int64_t qk_clip(GPT& model, const at::Tensor& logit_max, double tau, QkClipOn on);

}  // namespace gaugelab::gpt2
