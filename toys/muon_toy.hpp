// `gaugelab toy muon` — seed 003 §6, "Factorwise Muon Can Still Explode".
//
// L(A, B) = ½‖ABᵀ − I‖_F² on 2×2 factors, from A₀ = I, B₀ = (1 − ε)I moved by S = diag(K, K⁻¹):
//   A = diag(K, K⁻¹),  B = (1 − ε)·diag(K⁻¹, K),  ABᵀ = (1 − ε)I,  L = ε².
// ∇_A L = −εB and ∇_B L = −εA, so both exact polar factors are −I and one factorwise Muon step with
// shrinks ρ_A, ρ_B is A ← ρ_A·A + ηI, B ← ρ_B·B + ηI, giving (seed 003 §6)
//   m₁ = ρ_Aρ_B(1 − ε) + ρ_AηK + ρ_Bη(1 − ε)K⁻¹ + η²
//   m₂ = ρ_Aρ_B(1 − ε) + ρ_AηK⁻¹ + ρ_Bη(1 − ε)K + η²,     L_after = ½{(m₁ − 1)² + (m₂ − 1)²}.
// Newton–Schulz (NS5) maps each singular value x = σ/(‖G‖_F + 1e-7) to p⁵(x) instead of 1, so its
// closed form replaces each η above by η·p⁵(x) of the matching entry (core::newton_schulz_scalar).
// Simulated with the core's Muon (core::muon_step through step_pair/apply_pair; a fresh buffer with
// momentum 0, so the direction is G itself; shrink ρ = 1 − η·λ with λ = (1 − ρ)/η).
// The bf16-emulated NS5 has no closed form; it is compared with the fp64 NS5 closed form and the
// deviation reported as such.
//
// Table (series, index = row; long format):  K × shrink policy × orthogonaliser, where
//   policy 0 "flags"        ρ_A = --rho-a, ρ_B = --rho-b (shared shrink when equal)
//   policy 1 "rho_a tuned"  ρ_A = min(1, 1/(ηK)), ρ_B = --rho-b (independent shrink)
//   policy 2 "both tuned"   ρ_A = ρ_B = min(1, 1/(ηK)) (tames both entries, collapses ρ_Aρ_B(1 − ε))
//   orthogonaliser 0 exact polar (SVD), 1 NS5 in fp64, 2 NS5 with bf16 emulation.
#pragma once

#include <vector>

#include "core/update_muon.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct MuonToyOptions {
  double eta = 1e-3;    // η, Muon learning rate (as seed 003 §2's example; the seed leaves §6's η open)
  double eps = 1e-3;    // ε: ABᵀ = (1 − ε)I before the step
  double K = 1e6;       // headline gauge S = diag(K, 1/K) (K ≫ 1/η: the explosive regime)
  double rho_a = 0.99;  // ρ_A of policy "flags" (default: a shared decoupled shrink with ηλ = 0.01)
  double rho_b = 0.99;  // ρ_B of policy "flags"
  std::vector<double> K_grid = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};  // table rows (K ≤ 1e7: polar_factor's rank cut)
};

void declare(io::Options& opts, MuonToyOptions& o);

/// −(orthogonalised gradient) on the diagonal: the factor the seed's "ηI" carries per entry
/// (all 1 for the exact polar factor). a1, a2 for A's entries (1,1), (2,2); b1, b2 for B's.
struct MuonDirections {
  double a1 = 1, a2 = 1, b1 = 1, b2 = 1;
};

/// NS5's output on the counterexample's gradients: p⁵(σ/(‖σ‖₂ + ns.eps)) per singular value.
MuonDirections ns5_directions(double K, double eps, const core::NewtonSchulzOptions& ns);

struct MuonOutcome {
  double m1 = 0, m2 = 0, loss_after = 0;
};

/// Seed 003 §6 closed form (exact polar factor: d = {1, 1, 1, 1}), generalised to directions d.
MuonOutcome muon_closed_form(double K, double eps, double eta, double rho_a, double rho_b,
                             const MuonDirections& d = {});

/// The shrink the core applies for decoupled weight decay λ: ρ = 1 − ηλ (core::decay_factor).
double muon_shrink(double eta, double weight_decay);
/// The weight decay λ = (1 − ρ)/η that asks the core for shrink ρ.
double muon_weight_decay(double eta, double rho);

/// One factorwise Muon step of the core from the counterexample's (A, B), with decoupled weight
/// decays wd_a, wd_b (shrinks muon_shrink(eta, wd)). orthogonaliser: 0 exact polar, 1 NS5 fp64, 2 NS5 bf16.
MuonOutcome muon_simulated(double K, double eps, double eta, double wd_a, double wd_b, int orthogonaliser);

ToyRun run_muon_toy(const MuonToyOptions& o);

}  // namespace gaugelab::toys
