// The Q/K imbalance of the effective maps per head, and the gauge move that removes it: the reference
// math of gpt2/train/qk_balance.hpp.
// Math convention y = W x: W_Q,eff, W_K,eff [h·d_h, d_in] are the effective maps with every multiplier
// merged (W_eff = diag(r)·W̄·diag(c), lrm_gauge.hpp); head i owns rows [i·d_h, (i+1)·d_h) of both.
//   n_Q,i = ‖W_Q,eff[head i rows]‖_F,  n_K,i = ‖W_K,eff[head i rows]‖_F,  imbalance ρ_i = log(n_Q,i / n_K,i).
// Seed 000's drift |log(s_Q/s_K)| measures only the row multipliers' RMS; W̄ and the column multipliers
// c_Q, c_K carry a Q/K imbalance of their own, which ρ measures and no multiplier-only fix touches.
//
// Group removed by the balancing fix: the per-head scalar Q/K gauge (ℝ₊)^h, q_i ↦ q_i/g_i, k_i ↦ g_i·k_i
// (every logit q_i·k_i unchanged; biases move with their rows). Representative: n_Q,i = n_K,i, i.e.
// g_i = √((n_Q,i + ε)/(n_K,i + ε)): the minimum-norm representative of the effective maps on the
// orbit (n_Q² + n_K² is least where they are equal), instead of seed 000 §3.3's balance of the
// multipliers alone (gauge_fix_lrm.hpp). Not a representative the optimizer singles out: the motion
// W̄'s steps drive does not depend on this gauge, and the multiplier steps move least at s_Q = s_K.
#pragma once

#include <cmath>

#include "core/gauge_linalg.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// Frobenius norm of each head's row block of W [h·d_h, d_in] → [h].
template <class T>
Vec<T> head_row_norms(const Mat<T>& W /*[h·d_h, d_in]*/, Index heads) {
  require(heads >= 1 && W.rows() % heads == 0, "head_row_norms", "W's rows must split into `heads` equal blocks");
  const Index dh = W.rows() / heads;
  Vec<T> n(heads);
  for (Index i = 0; i < heads; ++i) n(i) = W.middleRows(i * dh, dh).norm();
  return n;
}

/// ρ_i = log(n_Q,i / n_K,i) per head for the effective maps W_q, W_k [h·d_h, d_in] → [h].
template <class T>
Vec<T> qk_effective_log_ratio(const Mat<T>& W_q /*[h·d_h, d_in]*/, const Mat<T>& W_k /*[h·d_h, d_in]*/, Index heads) {
  require(W_q.rows() == W_k.rows() && W_q.cols() == W_k.cols(), "qk_effective_log_ratio", "W_q and W_k must have one shape");
  return (head_row_norms(W_q, heads).array() / head_row_norms(W_k, heads).array()).log().matrix();
}

/// The balancing gauge g_i = √((n_Q,i + ε)/(n_K,i + ε)) [h]: W_Q rows of head i divided by g_i and W_K rows
/// multiplied by it leave n_Q,i/g_i = n_K,i·g_i (exactly when ε = 0).
template <class T>
Vec<T> qk_balance_gauge(const Mat<T>& W_q /*[h·d_h, d_in]*/, const Mat<T>& W_k /*[h·d_h, d_in]*/, Index heads,
                        double eps) {
  require(eps >= 0, "qk_balance_gauge", "eps must be >= 0");
  require(W_q.rows() == W_k.rows() && W_q.cols() == W_k.cols(), "qk_balance_gauge", "W_q and W_k must have one shape");
  const Vec<T> nq = head_row_norms(W_q, heads), nk = head_row_norms(W_k, heads);
  return ((nq.array() + T(eps)) / (nk.array() + T(eps))).sqrt().matrix();
}

}  // namespace gaugelab::core
