// `gaugelab toy factor-matrix` — seed 003 §3, "Matrix Quotient Updates".
//
// L(A, B) = ½‖ABᵀ − Y‖_F² with a random rank-r target Y (‖Y‖_F = 1) and every representative of
// M = (1 − ε)Y: the balanced pair (A₀, B₀) = (U(1−ε)^{½}Σ^{½}, V(1−ε)^{½}Σ^{½}) from Y = UΣVᵀ, and
// its gauge images (A₀S, B₀S⁻ᵀ) for random S with singular values spread over [1/K, K]
// (core::random_gl with condition number K², so K plays the role of the scalar toy's K).
// From each representative one step:
//   plain GD, closed form (seed 003 §3, "GD Exposes the Representative", plus the exact η² term)
//       M_after = M − η(G·BBᵀ + AAᵀ·G) + η²·G·BAᵀ·G,           G = M − Y
//   opposite-Gram corrected GD (λ = 0), closed form that depends on M alone:
//       ΔA = −ηGB(BᵀB)⁻¹, ΔB = −ηGᵀA(AᵀA)⁻¹ with B(BᵀB)⁻¹Bᵀ = P_row, A(AᵀA)⁻¹Aᵀ = P_col and
//       B(BᵀB)⁻¹(AᵀA)⁻¹Aᵀ = M⁺, so  M_after = M − η(G·P_row + P_col·G) + η²·G·M⁺·G
// beside the same steps simulated with the core (SGD through step_pair, opposite_gram_correction).
// Per K point the spread over `gauges` random gauges; the series index is the K-grid point. The
// motion spreads (plain and corrected alike) are max over gauges of ‖M_after(S) − M_after(balanced)‖,
// both simulated, over the step's size; motion_err_quotient_closed is the corrected step's distance
// from its closed form in the same units (until 2026-12-01 that distance was logged as the spread).
// Agreement: relative errors of M_after, and max_err_over_roundoff, the error in units of the
// representative's own round-off u·‖A‖_F‖B‖_F (factor_matrix.cpp, over_floor): a pair with
// cond(S) = K² cannot hold M to better than that, so beyond K ≈ 100 "1e-12 relative" is not a
// property double precision can have, and the check moves to that floor.
#pragma once

#include <cstdint>
#include <string>

#include "core/types.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct FactorMatrixOptions {
  int m = 6;              // rows of M and A
  int n = 5;              // rows of B (columns of M)
  int r = 3;              // inner dimension (rank of the target)
  double eta = 1e-3;      // η, GD learning rate (as the scalar toy)
  double eps = 1e-3;      // ε: every representative starts at M = (1 − ε)Y, loss ½ε²
  double K = 100;         // headline gauge: singular values over [1/K, K] (condition number K² = 1e4)
  double K_min = 1.0;     // gauge sweep: first K (K = 1: random orthogonal gauges)
  double K_max = 1e4;     // gauge sweep: last K (condition number 1e8)
  int K_points = 9;       // gauge sweep: log-spaced points (two per decade)
  int gauges = 16;        // random gauges per K point
  std::string solve = "qr";  // Gram solve of the correction: qr (accurate for ill-conditioned factors) or cholesky
  int seeds = 1;          // independent targets and gauge draws (seed, seed+1, ...)
};

void declare(io::Options& opts, FactorMatrixOptions& o);

/// M_after of one plain GD step from (A, B) on ½‖ABᵀ − Y‖² (seed 003 §3), G = ABᵀ − Y. Returns [m, n].
core::Mat<double> factor_gd_closed_form(const core::Mat<double>& A /*[m, r]*/, const core::Mat<double>& B /*[n, r]*/,
                                        const core::Mat<double>& Y /*[m, n]*/, double eta);
/// M_after of one opposite-Gram corrected GD step (λ = 0) from any full-rank representative of the
/// rank-r matrix M: M − η(G·P_row + P_col·G) + η²·G·M⁺·G, computed from M's SVD alone. Returns [m, n].
core::Mat<double> factor_quotient_closed_form(const core::Mat<double>& M /*[m, n]*/, const core::Mat<double>& Y /*[m, n]*/,
                                              int r, double eta);

/// One seed: target, base pair, headline gauge, gauge sweep.
ToyRun run_factor_matrix(const FactorMatrixOptions& o, std::uint64_t seed);

}  // namespace gaugelab::toys
