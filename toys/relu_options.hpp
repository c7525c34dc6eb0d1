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
  double noise_std = 0.7071067811865476;   // σ of η; σ² = 0.5 fits the paper's MSE floor ≈ 0.52–0.54 (unstated)
  bool val_noise = true;          // validation targets carry the same noise (the paper's val MSE ≈ 0.52 needs it)
  // --- training (plain full-batch GD on MSE + λG, eq. 10) ---
  double lr = 1e-2;               // fixed learning rate (Table I's values equal Table II's at 1e-2)
  double lambda = 0.0;            // gauge-fixing strength λ (eq. 10)
  double eps = 1e-6;              // ε in log(n + ε) (eq. 9; "small", unstated)
  std::int64_t steps = 5000;      // GD steps (unstated)
  std::string init = "torch";     // torch: U(±1/√fan_in) for weights and biases (nn.Linear's default); he: N(0, 2/fan_in) weights, zero b2, U(train range) kink positions
  int log_every = 10;             // series sample every this many steps (and the last step)
  // --- stability rule (stated here, applied the same everywhere; toys/README.md) ---
  double diverge_loss = 1e6;      // a training loss above this, or non-finite, means divergence
  double late_fraction = 0.2;     // the last 20 % of steps are "late training"
  double oscillation_rise = 0.05; // a late run is oscillating if the fraction of late steps whose loss rises exceeds this
  // --- invariance test (eq. 11, Fig. 5) ---
  int gauges = 200;               // random neuron rescalings applied to the trained net
  double gauge_log_spread = 2.302585092994046;  // s_i = exp(U(-a, a)), a = ln 10: scales in [0.1, 10] (unstated)
  // --- seeds ---
  int seeds = 10;                 // independent runs seed, seed+1, ... (data, init and gauges all derive from it)
};

/// Registers every field on `opts` with its help and range (one declaration, used by toy and sweep).
void declare(io::Options& opts, ReluToyOptions& o);

}  // namespace gaugelab::toys
