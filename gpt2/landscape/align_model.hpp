// Aligning one GPT-2 model to another before interpolating them (seed 001 §7.4, Prop. 47, App. H.3
// Algorithm 3): the tensor side of core/gauge_align.hpp, on whole models.
//
// Which symmetries, in the order they are removed (each level includes the ones before it):
//   none       the models as trained (multipliers folded, see below)
//   residual   a permutation of the residual stream's d channels: LayerNorm normalises over the channels
//              and scales them one by one, so permuting every residual-indexed axis (embedding columns,
//              LayerNorm gains and biases, the input columns of c_attn and c_fc, the output rows of
//              attn_proj and mlp_proj and their biases) leaves the function unchanged. Not part of
//              seed 001's G_max (it acts on the attention layer's inputs), but every later step compares
//              weights channel by channel, which means nothing while the two residual bases differ.
//              Chosen by weight matching on the embeddings [wte; wpe] (the only weights whose residual
//              axis is pinned by data alone; the blocks' are then compared in the matched basis).
//   attention  per layer, Algorithm 3: both models' heads to a canonical slice (qr: Algorithm 1; gram:
//              the Gram-balanced alternative), the head permutation by the Hungarian algorithm, and the
//              residual O(d_k) × O(d_v) of each matched pair by orthogonal Procrustes (core::HeadCost
//              picks the matching cost: the exact Procrustes distance, or Algorithm 3's ‖ΔW_q‖ + ‖ΔW_k‖).
//   full       also the MLP's hidden units, per layer, by weight matching (Ainsworth et al., seed 001 [1]).
// Multipliers are folded into their weights first (GPT::merge_multipliers: exact), so the path runs
// through the effective weights W_eff — the parameterisation in which the gauge groups act linearly —
// and the written models carry multipliers at 1. Every move is an exact symmetry; the function is
// preserved up to the float32 rounding of storing the moved weights (measured by the caller).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gauge_align.hpp"
#include "gpt2/inspect/checks.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

enum class AlignLevel { none, residual, attention, full };
const char* align_level_name(AlignLevel l);             // "none", "residual", "attention", "full"
AlignLevel parse_align_level(const std::string& name);  // throws std::invalid_argument

struct AlignSettings {
  AlignLevel level = AlignLevel::full;
  inspect::Slice slice = inspect::Slice::qr;             // canonical slice of step "attention" (qr or gram)
  bool canonicalize = true;                              // false: no slice — heads matched over S_h × O(d_k) × O(d_v)
                                                         // as trained (each model keeps its own Q/K, V/O balance)
  core::HeadCost head_cost = core::HeadCost::procrustes;  // how heads are paired
};

/// What one alignment did: the distance ‖θ_A − θ_B‖_F over every parameter after each step, and the
/// matched heads' remaining distances.
struct AlignReport {
  std::vector<std::string> steps;        // "folded", "residual", "canonical", "heads", "mlp" (those run)
  std::vector<double> distance;          // ‖θ_A − θ_B‖_F after each step
  std::vector<std::vector<double>> head_distance2;  // [layer][position]: ‖head_A − aligned head_B‖² (attention)
  std::vector<std::int64_t> residual_moved;         // channels the residual permutation moved (0 or 1 entry)
  std::vector<std::int64_t> heads_moved;            // per layer: heads the permutation moved
  std::vector<std::int64_t> units_moved;            // per layer: MLP units the permutation moved
};

/// The settings in which two configurations differ, as "n_embd 64 vs 32, n_head 4 vs 2"; "" when equal.
std::string config_difference(const ModelConfig& a, const ModelConfig& b);

/// Moves a and b to the two ends of the path for `s.level`: both with multipliers folded; from
/// "attention" on, both on the canonical slice; b moved by the symmetry found at each level. Both
/// models must share their configuration (throws std::invalid_argument otherwise; and for QK-norm
/// models at level attention or above, whose per-head normalisation breaks GL(d_k)).
AlignReport align_models(GPT& a, GPT& b, const AlignSettings& s);

/// Residual channels reordered (gather: new channel j = old channel p[j]) in every residual-indexed
/// tensor, multipliers included. p [n_embd].
void permute_residual(GPT& m, const core::Permutation& p);
/// MLP hidden units reordered (gather) in c_fc's rows, bias and row multipliers and mlp_proj's columns
/// and column multipliers. p [4·n_embd].
void permute_mlp_units(Block& b, const core::Permutation& p);

/// The residual permutation of b that best matches a's embeddings (weight matching on [wte; wpe]).
core::Permutation match_residual(const GPT& a, const GPT& b);
/// The MLP unit permutation of block b that best matches block a (incoming rows [W_fc | b_fc], outgoing
/// columns of W_proj; effective weights).
core::Permutation match_mlp_units(const Block& a, const Block& b);

/// ‖θ_a − θ_b‖_F over every parameter (same configuration).
double parameter_distance(GPT& a, GPT& b);
/// out ← (1 − t)·a + t·b, parameter by parameter (same configuration; out may be neither a nor b).
void interpolate_parameters(GPT& out, GPT& a, GPT& b, double t);

}  // namespace gaugelab::gpt2
