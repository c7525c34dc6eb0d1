// Gram balance: the GL(r) → O(r) gauge fix of a factor pair (seed 001 §7.2 / App. E.4 "alternative
// Gram-balanced approach"; DESIGN §3 "Gram balance (H_A = H_B)").
//
// Group removed: the symmetric (positive definite) part of GL(r) acting as (A, B) ↦ (A S, B S⁻ᵀ);
// the balanced condition (AS)ᵀ(AS) = (BS⁻ᵀ)ᵀ(BS⁻ᵀ) still holds after any further orthogonal S, so a
// residual O(r) stays (seed 001 Prop. 45 counts r(r+1)/2 removed, r(r−1)/2 left).
// Why this representative: both factors carry the same Gram, so neither factor holds the pair's scale
// or shape alone — the factor analogue of seed 004's n₁ = n₂ — and the opposite-Gram preconditioners
// of seed 003 §3 coincide there. Among all S that balance, we take the symmetric positive definite
// one (no rotation, polar factor I), which makes the fix idempotent: a balanced pair gets S = I.
//
// Derivation. With P = AᵀA, Q = BᵀB we need SᵀPS = S⁻¹QS⁻ᵀ. Multiplying by S on the left and Sᵀ on
// the right gives X P X = Q for X = S Sᵀ, whose SPD solution is the matrix geometric mean
//     X = P⁻¹ # Q = P^{-1/2} (P^{1/2} Q P^{1/2})^{1/2} P^{-1/2},
// and S = X^{1/2}. The common Gram is then X^{1/2} P X^{1/2} (= X^{-1/2} Q X^{-1/2}). Both factors
// need full column rank (P, Q positive definite); otherwise the functions throw.
#pragma once

#include "core/attention_head.hpp"
#include "core/coordinates.hpp"
#include "core/factor_gauge.hpp"
#include "core/gauge_linalg.hpp"

namespace gaugelab::core {

/// The SPD gauge S [r, r] with Sᵀ·P·S = S⁻¹·Q·S⁻ᵀ for SPD P, Q [r, r].
template <class T>
Mat<T> gram_balance_gauge(const Mat<T>& p, const Mat<T>& q) {
  require(p.rows() == p.cols() && q.rows() == p.rows() && q.cols() == p.cols(), "gram_balance_gauge",
          "P and Q must be square of the same size");
  const Mat<T> p_half = spd_sqrt(p);
  const Mat<T> p_inv_half = spd_inv_sqrt(p, "gram_balance_gauge (AᵀA)");
  Mat<T> inner = p_half * q * p_half;
  inner = T(0.5) * (inner + inner.transpose());  // symmetrise against round-off before the eigensolve
  require(Eigen::SelfAdjointEigenSolver<Mat<T>>(inner, Eigen::EigenvaluesOnly).eigenvalues().minCoeff() > T(0),
          "gram_balance_gauge", "BᵀB is not positive definite (rank-deficient factor?)");
  Mat<T> x = p_inv_half * spd_sqrt(inner) * p_inv_half;
  x = T(0.5) * (x + x.transpose());
  return spd_sqrt(x);
}

template <class T>
struct GramBalanceResult {
  FactorPair<T> pair;  // balanced: AᵀA = BᵀB, same A·Bᵀ
  Mat<T> S;            // [r, r] SPD gauge applied
};

/// Balances the Grams of a factor pair (both factors need full column rank).
template <class T>
GramBalanceResult<T> gram_balance(const FactorPair<T>& p) {
  require_factor_pair(p, "gram_balance");
  const Mat<T> s = gram_balance_gauge<T>(p.A.transpose() * p.A, p.B.transpose() * p.B);
  return {apply_gauge(p, s), s};
}

template <class T>
struct HeadBalanceResult {
  AttentionHead<T> head;  // balanced head
  Mat<T> S;               // [dk, dk] the query–key gauge applied
};

/// Q/K weight-Gram balance of one head, W_qᵀW_q = W_kᵀW_k (seed 001 App. E.4 alternative slice);
/// biases follow the gauge (apply_qk_gauge). Removes the symmetric part of GL(d_k), leaves O(d_k).
template <class T>
HeadBalanceResult<T> gram_balance_qk(const AttentionHead<T>& h) {
  require_head(h, "gram_balance_qk");
  const Mat<T> s = gram_balance_gauge<T>(h.W_q.transpose() * h.W_q, h.W_k.transpose() * h.W_k);
  return {apply_qk_gauge(h, s), s};
}

/// Q/K activation-covariance balance on inputs X [T, d]: S_Q = S_K after the gauge (seed 001 App.
/// G.1 "balances the Q/K sector by whitening the associated covariance matrices", via SPD square
/// roots). Under the Q/K gauge Q ↦ Q·S and K ↦ K·S⁻ᵀ (biases included), so the covariances, centred
/// or not, move as S_Q ↦ SᵀS_QS, S_K ↦ S⁻¹S_KS⁻ᵀ: the same law as the weight Grams, so the same geometric-mean solution applies. Data-dependent slice.
template <class T>
HeadBalanceResult<T> covariance_balance_qk(const AttentionHead<T>& h, const Mat<T>& x,
                                           const CovarianceOptions& options = {}) {
  const QkCovariances<T> c = qk_covariances(h, x, options);
  const Mat<T> s = gram_balance_gauge<T>(c.S_Q, c.S_K);
  return {apply_qk_gauge(h, s), s};
}

// Compiled once for float and double in core/gauge_fix_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_FIX_GRAM_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> gram_balance_gauge<T>(const Mat<T>&, const Mat<T>&); \
  EXTERN template GramBalanceResult<T> gram_balance<T>(const FactorPair<T>&); \
  EXTERN template HeadBalanceResult<T> gram_balance_qk<T>(const AttentionHead<T>&); \
  EXTERN template HeadBalanceResult<T> covariance_balance_qk<T>(const AttentionHead<T>&, const Mat<T>&, const CovarianceOptions&);
GAUGELAB_CORE_GAUGE_FIX_GRAM_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_FIX_GRAM_INSTANCES(extern, double)

}  // namespace gaugelab::core
