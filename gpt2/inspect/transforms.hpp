// The model-level experiments of `gaugelab inspect` (seed 001 App. G.3, G.5): random valid gauges and
// the three invalid families applied to the whole model, the errors they cause, and the exactness of a
// canonicalised model (teacher-forced logits, greedy decoding).
//
// Errors follow App. G: ‖Y' − Y‖_F / (‖Y‖_F + ε_fp32), Y the original and Y' the moved model's output:
//   score  the pre-softmax attention scores Q·Kᵀ/√d_k of every head (the seed's "attention logit"),
//   attn   the attention layer's output (core::layer_output, causal) on that layer's real inputs,
//   logit  the model's final logits on the fixed prompts (teacher forcing).
// score and attn are evaluated by the core in the model's precision (float for fp32) on matrices
// read back from the moved model, so they include the rounding of storing the moved weights.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/attention_layer.hpp"
#include "core/random.hpp"
#include "gpt2/inspect/checks.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2::inspect {

/// The fixed inputs and the original model's answers every comparison is made against.
struct Reference {
  at::Tensor prompts;                              // [P, prompt_len] int64 on the model's device
  at::Tensor logits;                               // [P, prompt_len, vocab] original logits
  std::vector<core::AttentionLayer<double>> layers;  // original effective layers (float64)
  std::vector<core::Mat<double>> probe_inputs;     // per layer [T, d]: one sequence's attention inputs
  bool fp64 = false;                               // evaluate score/attn in double (else float)
};

/// Errors of the (already moved) model against `ref`; perms[ℓ] maps the moved layer's heads back to the
/// original ones (gather: moved head j = original head perms[ℓ][j]) so scores are compared head to head.
TransformErrors compare(const GPT& moved, const Reference& ref, const std::vector<core::Permutation>& perms);

/// A random element of G_max for one layer: S_i, C_i = core::near_orthogonal(δ), a uniform permutation.
core::LayerGauge<double> random_valid_gauge(core::Rng& rng, std::int64_t heads, std::int64_t d_k, std::int64_t d_v,
                                            double perturbation);

/// Seed 001 App. G.1's invalid families (InvalidFamily, inspect_checks.hpp) on every head of every
/// layer, matrices core::random_gl(κ). Biases move with their matrices. A near-orthogonal A would make
/// wrong_inverse valid up to O(δ) (A⁻ᵀ = A for orthogonal A), hence the general family.
void apply_invalid(GPT& model, InvalidFamily family, core::Rng& rng, double kappa);

/// Greedy continuation (argmax, no sampling) of every prompt [P, L]: the generated ids [P, n].
at::Tensor greedy_decode(const GPT& model, const at::Tensor& prompts, std::int64_t n);

/// `model` (canonicalised) against the original logits and greedy continuations `ref_greedy` [P, n].
Exactness exactness(const GPT& model, const Reference& ref, const at::Tensor& ref_greedy);

}  // namespace gaugelab::gpt2::inspect
