// Muon for the trainer's hidden matrices (seed 002 trains learnable multipliers with Adam and with Muon):
// the tensor twin of core/update_muon.hpp (KellerJordan/Muon), tested against it.
//   buf ← β·buf + (1 − β)·G;   g = β·buf + (1 − β)·G (Nesterov);   O = NS5(g)
//   W ← (1 − η·λ)·W − η·√max(1, rows/cols)·O
// As MuonWithAuxAdam: Muon on the 2-D hidden matrices (c_attn, attn c_proj, c_fc, mlp c_proj), AdamW on
// the embeddings (and the tied head), biases, LayerNorm and multipliers. c_attn [3d, d] packs W_Q, W_K,
// W_V: by default each [d, d] block is orthogonalised on its own (modded-nanogpt's view of qkv as three
// matrices; `fused` orthogonalises the packed matrix as one, as KellerJordan's code would see it).
// NS5 runs in bfloat16 on CUDA (KellerJordan) and in float32 on the CPU (bf16 matmuls are slow there).
#pragma once

#include <ATen/core/Tensor.h>

namespace gaugelab::gpt2 {

/// zeropower_via_newtonschulz5 on G [rows, cols]: transposed first when rows > cols, X = G/(‖G‖_F + 1e-7),
/// then `steps` times A = XXᵀ, B = bA + cA², X = aX + BX with (a, b, c) = (3.4445, −4.7750, 2.0315).
/// Computed in bfloat16 when `bf16`, else in G's dtype; returns G's dtype and shape.
at::Tensor newton_schulz5(const at::Tensor& G, int steps = 5, bool bf16 = false);

struct MuonSettings {
  double lr = 0.02;        // η at the schedule's peak (KellerJordan's MuonWithAuxAdam example); the trainer
                           // scales it by lr(it)/lr (the same warm-up and cosine as AdamW)
  double momentum = 0.95;  // β
  double weight_decay = 0.01;  // λ, decoupled (MuonWithAuxAdam example)
  bool split_qkv = true;   // orthogonalise W_Q, W_K, W_V of c_attn separately
  bool bf16 = false;       // NS5 in bfloat16
};

/// One Muon step of `param` [rows, cols] with gradient `grad` and momentum buffer `buf` (updated);
/// `qkv` says param is a packed c_attn weight [3d, d]; `lr` is this step's η.
void muon_update(at::Tensor& param, const at::Tensor& grad, at::Tensor& buf, double lr, const MuonSettings& s,
                 bool qkv);

}  // namespace gaugelab::gpt2
