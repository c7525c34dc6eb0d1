// Settings of the seed-004 ReLU regression toy (`gaugelab toy relu`), with every choice the paper
// leaves open made explicit (toys/README.md says why each default is what it is).
#pragma once

#include <cstdint>
#include <string>

#include "io/options.hpp"

namespace gaugelab::toys {

struct ReluToyOptions {
  // --- problem (seed 004 §V) ---
  int hidden = 20;                // H, hidden width (paper: 20)
  int n_train = 200;              // training samples, x ~ U[train_lo, train_hi] (unstated in the paper)
  int n_val = 400;                // validation points, an even grid on [val_lo, val_hi] (Fig. 2: "validation grid")
  double train_lo = -2.0, train_hi = 2.0;  // paper: [-2, 2]
  double val_lo = -3.0, val_hi = 3.0;      // paper: [-3, 3]
  double noise_std = 0.1;         // σ of η (unstated): Table I's train − val gap, 0.0189 ≈ σ² + 0.0117, gives σ ≈ 0.1 (README)
  bool val_noise = false;         // validation targets noiseless: Fig. 2 "noiseless target ... on the validation grid"
  std::int64_t data_seed = 0;     // one data set for all seeds (Table I's std 0.0017 is 15x below a resampled set's); -1: per seed
  // --- training (plain full-batch GD on MSE + λG, eq. 10) ---
  double lr = 1e-2;               // fixed learning rate (Table I's values equal Table II's at 1e-2)
  double lambda = 0.0;            // gauge-fixing strength λ (eq. 10)
  double eps = 1e-6;              // ε in log(n + ε) (eq. 9; "small", unstated)
  std::int64_t steps = 300;       // GD steps (unstated): the round count whose Δ_inv median lands in Fig. 5's range (README)
  std::string init = "small";     // small: every weight and bias N(0, init_scale²) (hand-written NumPy nets); torch: U(±1/√fan_in) (nn.Linear);
                                  // he: N(0, 2/fan_in) weights, zero b2, kinks uniform over the training interval
  double init_scale = 0.1;        // σ of the small init (Fig. 5's Δ_inv ≈ 1e-17 implies outputs ≈ 1e-2; README)
  std::string kernel = "sorted";  // the step's task pass: sorted, O(N + H) by sorting x once and tracking each neuron's
                                  // kink (toys/relu_sorted_pass.hpp); dense, O(N·H), the reference. Same sums, other order
  int log_every = 10;             // series sample every this many steps (and the last step)
  bool save_data = false;         // also log the data set, the trained net's validation curve (Fig. 2) and every
                                  // neuron's gauge coordinate v_i at every logged step (/arrays/v_by_step)
  bool sharpness = false;         // also the Hessian's top eigenvalue at the start and end (4 x 122 gradients a run; off in
                                  // sweeps by default since a 300-step run costs ~300 gradients)
  // --- stability rule (stated here, applied the same everywhere; toys/README.md) ---
  double diverge_loss = 1e6;      // a training loss above this, or non-finite, means divergence
  double late_fraction = 0.2;     // the last 20 % of steps are "late training"
  double oscillation_rise = 0.05; // a late run is oscillating if the fraction of late steps whose loss rises exceeds this
  double rise_tol = 1e-9;         // a step rises when L(t) > L(t-1)·(1 + rise_tol): round-off (~1e-14 relative on 200
                                  // samples) is not a rise; a run at its plateau rose in ~half its steps by 1 ulp (README)
  // --- invariance test (eq. 11, Fig. 5) ---
  int gauges = 200;               // random neuron rescalings applied to the trained net
  double gauge_log_spread = 2.302585092994046;  // s_i = exp(U(-a, a)), a = ln 10: scales in [0.1, 10] (unstated)
  // --- seeds ---
  int seeds = 10;                 // independent runs seed, seed+1, ... (data, init and gauges all derive from it)
};

/// Registers every field on `opts` with its help and range (one declaration, used by toy and sweep).
void declare(io::Options& opts, ReluToyOptions& o);

}  // namespace gaugelab::toys
