// Factor-pair preconditioned updates from the literature, written as what they are: the opposite-Gram
// correction (core/quotient.hpp) applied to a rule's increments of a factor pair (A [m, r], B [n, r], M = A·Bᵀ).
//   ScaledGD (Tong, Ma & Chi, "Accelerating ill-conditioned low-rank matrix estimation via scaled gradient
//   descent", JMLR 2021): ΔA = U_A(BᵀB)⁻¹, ΔB = U_B(AᵀA)⁻¹ with U = −∇. Stated invariance: the whole GL(r)
//   acting as (A S, B S⁻ᵀ) — from gauge-equivalent factors (gradients moved as covectors) the represented
//   motion is the same (the undamped correction's quotient compatibility).
//   Riemannian-preconditioned factor updates (Zhang & Pilanci, "Riemannian preconditioned LoRA for fine-tuning
//   foundation models", ICML 2024): the same with (BᵀB + δI)⁻¹, (AᵀA + δI)⁻¹ for a small δ > 0 — invariant only
//   while δ is small against the Grams' eigenvalues; a gauge of condition κ pushes some of them down by κ.
// Both act on the pair jointly (not factor by factor); they are stateless.
#pragma once

#include "core/gauge_linalg.hpp"
#include "core/quotient.hpp"

namespace gaugelab::core {

/// ScaledGD's increments of a factor pair from increments U_A [m, r], U_B [n, r] (e.g. U = −gradient).
template <class T>
PairIncrement<T> scaled_gd(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& U_A /*[m, r]*/,
                           const Mat<T>& U_B /*[n, r]*/) {
  return opposite_gram_correction(A, B, U_A, U_B, QuotientOptions{QuotientMode::full, 0.0, GramSolve::cholesky});
}

/// Riemannian-preconditioned increments with damping δ >= 0 (δ = 0 is ScaledGD).
template <class T>
PairIncrement<T> riemannian_preconditioned(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/,
                                           const Mat<T>& U_A /*[m, r]*/, const Mat<T>& U_B /*[n, r]*/, double delta) {
  require(delta >= 0.0, "riemannian_preconditioned", "delta must be >= 0");
  return opposite_gram_correction(A, B, U_A, U_B, QuotientOptions{QuotientMode::full, delta, GramSolve::cholesky});
}

// Compiled once for float and double in core/quotient_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_FACTOR_PRECOND_INSTANCES(EXTERN, T) \
  EXTERN template PairIncrement<T> scaled_gd<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&); \
  EXTERN template PairIncrement<T> riemannian_preconditioned<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, double);
GAUGELAB_CORE_UPDATE_FACTOR_PRECOND_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_FACTOR_PRECOND_INSTANCES(extern, double)

}  // namespace gaugelab::core
