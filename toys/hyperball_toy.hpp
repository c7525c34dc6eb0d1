// `gaugelab toy hyperball` — seed 003 §5, "Hard Radial Control".
//
// Hyperball keeps each factor on its Frobenius sphere (core::hyperball_step + apply_step):
//   U = −ηR·Ũ/‖Ũ‖_F,  W ← R·(W + U)/‖W + U‖_F      (seed 003 §5, "Sphere Retraction")
// so ‖A_t‖_F = R_A and tr(AᵀA) = R_A² at every step (closed form beside simulation). That fixes only
// the traces of the Grams ("Radial Control Is Not Factor Balance"): from a start with equal radii
// ‖A₀‖_F = ‖B₀‖_F but H_A ≠ H_B (a random pair moved by a gauge with singular values over [1/K, K],
// then by the scalar gauge that equalises the two norms), training ½‖ABᵀ − Y‖² keeps the
// relative Gram imbalance ‖H_A − H_B‖_F/‖H_A‖_F and the per-column RMS ratios ‖A_:j‖/‖B_:j‖ away
// from balance. A second run starts from the Gram-balanced representative of the same product
// (core::gram_balance) for reference. Also logged: the seed's retraction written out directly vs
// the core's step, and ‖P_T(λW)‖ ("Decay Vanishes in the Tangent Space").
#pragma once

#include <cstdint>

#include "core/types.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct HyperballToyOptions {
  int m = 8;                 // rows of A
  int n = 6;                 // rows of B
  int r = 4;                 // inner dimension
  double eta = 1e-2;         // η: each step moves ‖U‖_F = ηR before the retraction
  double K = 4.0;            // start imbalance: gauge singular values over [1/K, K] (cond K²)
  std::int64_t steps = 400;  // Hyperball steps per run
  int log_every = 1;         // series sample period
  int seeds = 1;             // independent pairs, gauges and targets (seed, seed+1, ...)
};

void declare(io::Options& opts, HyperballToyOptions& o);

/// The seed's sphere retraction written out: R·(W + U)/‖W + U‖_F with U = −ηR·G/‖G‖_F. Returns [p, q].
core::Mat<double> hyperball_retraction_closed_form(const core::Mat<double>& W /*[p, q]*/,
                                                   const core::Mat<double>& G /*[p, q]*/, double eta, double R);

/// max_j |log(‖A_:j‖/‖B_:j‖)|: how far the per-column RMS of the two factors is from equal.
double column_rms_log_ratio(const core::Mat<double>& A /*[m, r]*/, const core::Mat<double>& B /*[n, r]*/);

ToyRun run_hyperball_toy(const HyperballToyOptions& o, std::uint64_t seed);

}  // namespace gaugelab::toys
