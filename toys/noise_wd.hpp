// `gaugelab toy noise-wd` — seed 002 (Learnable Multipliers), a small qualitative proxy.
//
// Claim of the paper: gradient noise makes a matrix W random-walk outwards, decoupled weight decay
// pulls it in, and the two balance at an equilibrium norm ‖W‖ that scales like √(η/λ) whatever the
// data want; a learnable scalar (and per-row / per-column) multiplier lets the effective scale
// leave that equilibrium. Two experiments, both on the core's update rules:
//
// 1. Equilibrium. W [m, n] from 0 under pure noise G = σΞ (Ξ i.i.d. N(0, 1)), W ← ρW + U with
//    ρ = 1 − ηλ, over a grid of (η, λ): the base point, (ηf, λ/f) (ratio η/λ moves by f², product
//    fixed) and (ηf, λf) (ratio fixed, product moves) for each f in --grid-factors. Measured:
//    √(time-average of ‖W‖²) after a burn-in, for
//      SGD (U = −ηG): closed form E‖W_t‖² = η²σ²mn(1 − ρ^{2t})/(1 − ρ²) → ησ²mn/(λ(2 − ηλ)),
//      AdamW (U = −η m̂/(√v̂ + ε)): no closed form; the diffusion estimate ‖W‖² ≈ ηmn/(2λ) (the
//      normalised update has long-run variance ≈ 1 per entry when ηλ ≪ 1 − β₁), reported as such.
// 2. Multipliers. Regression target W* [m, n] with ‖W*‖_F = --target-norm and row scales spread
//    log-uniformly over [1/a, a]; population loss ℓ = ½‖W_eff − W*‖_F², noisy gradient
//    ∇_{W_eff} = (W_eff − W*) + σΞ. Three parameterisations trained with AdamW (η; λ on the matrix,
//    λ_mult on multipliers, as the paper's groups): plain W_eff = W; scalar W_eff = s·W̄; vector
//    W_eff = diag(r)·W̄·diag(c) (core::effective_weight). Logged per step: ‖W̄‖, ‖W_eff‖, the loss.
// The equilibrium grid goes to /arrays (eq_*), the multiplier trajectories at --target-norm to the
// series, and the final values over --target-grid to /arrays (tg_*).
// What this is not: the paper's LLM setting, its noise structure, or its optimiser tuning.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct NoiseWdOptions {
  int m = 8;                    // rows of W
  int n = 8;                    // columns of W
  double eta = 1e-2;            // η, learning rate of every parameter
  double lambda = 0.1;          // λ, decoupled weight decay of the matrix (GPT-2 tier matrix WD 0.1)
  double lambda_mult = 2e-3;    // decoupled weight decay of the multipliers (GPT-2 tier multiplier WD 2e-3)
  double sigma = 1.0;           // gradient-noise standard deviation per entry
  std::vector<double> grid_factors = {0.5, 2.0};  // equilibrium grid factors f (see header)
  double burn_in = 4.0;         // equilibrium: relaxation times 1/(ηλ) discarded before averaging (e^-8 left)
  double window = 12.0;         // equilibrium: relaxation times averaged over (≈ 2 % standard error on ‖W‖²)
  double target_norm = 0.5;     // ‖W*‖_F of the logged run (below the AdamW equilibrium √(ηmn/2λ) ≈ 1.8)
  std::vector<double> target_grid = {0.25, 0.5, 1, 2, 4, 8};  // targets on both sides of the equilibrium
  double target_row_spread = 4.0;  // target row scales log-uniform over [1/a, a]
  std::int64_t steps = 10000;   // multiplier experiment: AdamW steps (10 relaxation times at the defaults)
  int log_every = 50;           // multiplier experiment: series sample period
  double final_fraction = 0.2;  // "final" values average the last 20 % of steps (the noise does not settle)
  int seeds = 1;                // independent noise, targets and inits (seed, seed+1, ...)
};

void declare(io::Options& opts, NoiseWdOptions& o);

/// SGD under pure noise from W₀ = 0: E‖W_t‖_F² = η²σ²·mn·(1 − ρ^{2t})/(1 − ρ²), ρ = 1 − ηλ.
double sgd_noise_second_moment(double eta, double lambda, double sigma, double mn, double t);
/// The AdamW diffusion estimate of the equilibrium: ‖W‖_F² ≈ η·mn/(2λ).
double adamw_noise_second_moment_estimate(double eta, double lambda, double mn);

/// Chain rule through W_eff = diag(r)·W̄·diag(c) for the gradient G = ∇_{W_eff}ℓ [m, n]:
/// ∇W̄ = diag(r)·G·diag(c), ∇r_i = Σ_j G_ij W̄_ij c_j, ∇c_j = Σ_i r_i G_ij W̄_ij.
struct LrmGradients {
  core::Mat<double> W;  // [m, n]
  core::Vec<double> r;  // [m]
  core::Vec<double> c;  // [n]
};
LrmGradients lrm_gradients(const core::Vec<double>& r /*[m]*/, const core::Mat<double>& Wbar /*[m, n]*/,
                           const core::Vec<double>& c /*[n]*/, const core::Mat<double>& G /*[m, n]*/);

ToyRun run_noise_wd(const NoiseWdOptions& o, std::uint64_t seed);

}  // namespace gaugelab::toys
