// `gaugelab toy wd-gram` — seed 003 §4, "Decoupled Weight Decay".
//
// Decoupled weight decay is A ← ρ_A·A + U_A, B ← ρ_B·B + U_B. From one imbalanced factor pair
// (a random pair moved by a gauge S with singular values over [1/K, K]) three trajectories with the
// same shared shrink ρ = 1 − ηλ (core::sgd_step's decoupled decay, through step_pair/apply_pair):
//   shrink   U = 0: closed form (seed 003 §4, "Shared Shrink") H_A,t = ρ^{2t}H_A,0, H_B,t = ρ^{2t}H_B,0,
//            so D_t = ρ^{2t}D_0 — the absolute imbalance ‖D‖_F decays, the relative ‖D‖_F/‖H_A‖_F
//            stays exactly where it started;
//   gd       plain GD on ½‖ABᵀ − Y‖² without decay: D moves only at O(η²) per step (the cross
//            terms of the Gram evolution cancel for gradient increments);
//   gd_wd    GD with the shared shrink: every step obeys the "Full Gram Evolution" of seed 003 §4
//            (core::gram_after_step, checked against the simulated Grams each step); D shrinks
//            ≈ ρ² per step again, but now the loss holds the Grams' scale, so the relative
//            imbalance falls too — the increment, not the shrink, decides the relative balance.
// The target Y is a random rank-r matrix with ‖Y‖_F = ‖A₀B₀ᵀ‖_F.
#pragma once

#include <cstdint>

#include "core/types.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct WdGramOptions {
  int m = 8;                 // rows of A
  int n = 6;                 // rows of B
  int r = 4;                 // inner dimension
  double eta = 1e-2;         // η, GD learning rate (stable: η·K²·‖H‖ stays below 2 at the defaults)
  double lambda = 1.0;       // decoupled weight decay λ: shared shrink ρ = 1 − ηλ = 0.99 per step
  double K = 4.0;            // start: gauge image with singular values over [1/K, K] (cond K² = 16)
  std::int64_t steps = 300;  // steps of each trajectory (ρ^{2·300} ≈ 2.4e-3)
  int log_every = 1;         // series sample period
  int seeds = 1;             // independent pairs, gauges and targets (seed, seed+1, ...)
};

void declare(io::Options& opts, WdGramOptions& o);

/// Seed 003 §4 "Shared Shrink": D_t = ρ^{2t}·D_0 after t pure-shrink steps. Returns [r, r].
core::Mat<double> shrink_imbalance_closed_form(const core::Mat<double>& D0 /*[r, r]*/, double rho, std::int64_t t);

ToyRun run_wd_gram(const WdGramOptions& o, std::uint64_t seed);

}  // namespace gaugelab::toys
