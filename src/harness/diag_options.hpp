// Settings of `gaugelab diag heads`: one struct with commented defaults, registered as flags in one
// place (declare_diag_options) and validated in one place (validate_diag_options). Every setting is
// recorded in the run log's config_json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/options.hpp"

namespace gaugelab::harness {

struct DiagOptions {
  // --- the head ---
  std::string checkpoint;        // "" = random GPT-2-shaped head; else a checkpoint directory (GPT-2 tier loader)
  std::int64_t layer = 0;        // checkpoint layer ℓ
  std::int64_t head = 0;         // checkpoint head h
  std::string teacher_checkpoint;  // with --checkpoint: the teacher is this checkpoint's head (same layer and head; e.g.
                                 // a later step of the same run), so the step is the one toward it; "" = random teacher
  std::string data;              // with --checkpoint: token file whose tokens, through the checkpoint's model, give the
                                 // batch (the layer's real inputs, ln_1 outputs); "" = N(0, 1) batches
  std::int64_t d_model = 768;    // random head: d (GPT-2 124M)
  std::int64_t d_head = 64;      // random head: d_h = d_k = d_v (GPT-2 124M)
  double head_cond = 1.0;        // random head: condition number of the d_h mixing of each weight block
  bool biases = true;            // GPT-2 heads carry Q/K/V biases (folded into the factors, gauged with them)
  bool causal = true;            // GPT-2 attention is causal: only logits j <= i enter the data loss
  // --- the loss on the represented objects ---
  std::string loss = "data";     // data: logits + value-output map on a batch vs a teacher head (a surrogate: no softmax);
                                 // attention: the head's output softmax(QKᵀ/√r)·V·W_o vs the teacher's; matrix: ‖M − M*‖²
  std::int64_t tokens = 32;      // T, rows of the fixed batch X (data loss)
  // --- the grid ---
  std::vector<double> kappa = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};  // condition numbers of the gauges (1 … 1e6)
  std::vector<std::string> families = {"diagonal", "orthogonal", "general"};  // gauge families
  std::vector<std::string> rules = {"sgd", "momentum", "adamw", "adamw-warm", "muon", "hyperball"};  // also: scaledgd,
                                 // rpgd, lora-rite, lora-pro, circuit-muon (core/update_factor_literature.hpp)
  std::vector<std::string> wrappers = {"none", "full", "diagonal", "periodic", "smooth"};
  std::vector<std::string> transports = {"none", "vector", "covector"};  // adamw-warm: one variant per transport
  std::string momentum_transport = "covector";  // momentum's warm buffer (raw gradients: covector is exact); each: per transport
  std::int64_t gauges = 32;      // gauge draws per (family, κ) cell
  // --- the step ---
  double step_size = 1e-3;       // ‖ΔM(I)‖/‖M‖ of the reference step: each rule×wrapper's lr is set to give it
  double weight_decay = 0.0;     // decoupled decay λ_wd for every rule (ρ = 1 − lr·λ_wd); 0 isolates the increments
  std::int64_t warmup = 10;      // mini-batches that warm the state of momentum and adamw-warm
  double momentum = 0.9;         // SGD momentum μ (heavy-ball)
  double beta1 = 0.9;            // AdamW β₁
  double beta2 = 0.999;          // AdamW β₂
  double adam_eps = 1e-8;        // AdamW ε (torch default)
  double muon_momentum = 0.95;   // Muon β (KellerJordan), Nesterov, NS5
  double rp_delta = 1e-6;        // rpgd's δ in (BᵀB + δI)⁻¹ (ours: a numerical-safety damping; Grams here are O(1))
  double pro_delta = 1e-8;       // lora-pro: δ added to each Gram before its inverse (the reference's)
  double circuit_lambda = 1e-3;  // circuit-muon: the rebalance's damping λ (the reference's CIRCUIT_OV_DAMPING)
  // --- the wrappers ---
  double damping = 0.0;          // λ of the opposite-Gram correction (0: exact quotient compatibility)
  std::string solve = "cholesky";  // Gram solve of the full correction: cholesky (normal equations) | qr
  std::int64_t period = 4;       // k of the periodic full correction
  std::string between = "diagonal";  // periodic: correction on the other k − 1 steps (diagonal | none)
  std::int64_t smooth = 2;       // N gauges of random smoothing (cell's family and κ); costs N× a rule step, ~1/5 of the grid per unit of N
  // --- diag trajectory (multi-step) ---
  std::int64_t steps = 32;       // steps of every trajectory
  std::vector<double> periods = {2, 4, 8, 16};  // periodic schedules: the full correction every k steps (besides none, full)
  // --- run ---
  bool quick = false;            // demo grid: seconds (κ 1,100,1e4,1e6, 4 gauges, warm-up 4, 16 tokens), explicit flags win
};

/// Registers every field of `o` on `opts` (flag names with dashes; the field values are the defaults)
/// and the cross-field check that runs validate_diag_options.
void declare_diag_options(io::Options& opts, DiagOptions& o);

/// The one place settings are checked; throws io::UsageError naming the flag.
void validate_diag_options(const DiagOptions& o);

/// Applies --quick: shrinks every grid setting the user did not give explicitly (`given` = names given).
void apply_quick(DiagOptions& o, const std::vector<std::string>& given);

}  // namespace gaugelab::harness
