// QK-Clip (Kimi K2, arXiv 2507.20534 §2.1): the reference math of gpt2/train/qk_clip.hpp.
// Math convention y = W x: W_Q, W_K [h·d_h, d_in], head i owns rows [i·d_h, (i+1)·d_h) of both and
// the same slice of b_Q, b_K (lrm_gauge.hpp's layout). Every head whose largest signed logit
// S_i = max_{t>=s} q_t·k_s/√d_h exceeds τ gets its query and key rows scaled by √(τ/S_i) each, so its
// logits scale by γ_i = τ/S_i and the largest becomes τ; heads with S_i <= τ keep factor 1:
//   f = √(τ / max(S_i, τ)) on each of head i's d_h coordinates,   W_Q ← diag(f)·W_Q,  W_K ← diag(f)·W_K
// (and b_Q ← f⊙b_Q, b_K ← f⊙b_K, so q and k scale exactly). Not a gauge move: it changes the function
// of the clipped heads (the point of it) and leaves the others untouched.
#pragma once

#include <algorithm>
#include <cmath>

#include "core/gauge_linalg.hpp"
#include "core/lrm_gauge.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// Per-coordinate factors f [h·d_h] for the per-head signed max logits s_max [h]:
/// f_i = √(τ / max(S_i, τ)) repeated over head i's head_dim coordinates (1 where S_i <= τ). τ > 0.
template <class T>
Vec<T> qk_clip_factors(const Vec<T>& s_max /*[h]*/, double tau, Index head_dim) {
  require(tau > 0, "qk_clip_factors", "tau must be positive");
  require(head_dim >= 1, "qk_clip_factors", "head_dim must be >= 1");
  const T t = static_cast<T>(tau);
  Vec<T> per_head(s_max.size());  // [h]
  for (Index i = 0; i < s_max.size(); ++i) per_head(i) = std::sqrt(t / std::max(s_max(i), t));
  return expand_per_head(per_head, head_dim);
}

/// Number of heads QK-Clip scales: those with S_i > τ (s_max [h]).
template <class T>
Index qk_clip_count(const Vec<T>& s_max /*[h]*/, double tau) {
  return (s_max.array() > static_cast<T>(tau)).count();
}

/// The rows QK-Clip acts on in one layer; biases empty when the layer has none.
template <class T>
struct QkClipRows {
  Mat<T> W_q;  // [d, d_in]  d = h·d_h
  Mat<T> W_k;  // [d, d_in]
  Vec<T> b_q;  // [d] or empty
  Vec<T> b_k;  // [d] or empty
};

/// W_Q ← diag(f)·W_Q, W_K ← diag(f)·W_K, b_Q ← f⊙b_Q, b_K ← f⊙b_K for factors f [d] (qk_clip_factors).
template <class T>
QkClipRows<T> apply_qk_clip_factors(const QkClipRows<T>& rows, const Vec<T>& f /*[d]*/) {
  const Index d = f.size();
  require(rows.W_q.rows() == d && rows.W_k.rows() == d, "apply_qk_clip_factors", "W_q and W_k must be [d, d_in] with d = f's size");
  require(rows.W_k.cols() == rows.W_q.cols(), "apply_qk_clip_factors", "W_q and W_k must have the same d_in");
  require(rows.b_q.size() == rows.b_k.size() && (rows.b_q.size() == 0 || rows.b_q.size() == d), "apply_qk_clip_factors",
          "b_q and b_k must both be [d] or both be empty");
  QkClipRows<T> out = rows;
  out.W_q = f.asDiagonal() * rows.W_q;
  out.W_k = f.asDiagonal() * rows.W_k;
  if (rows.b_q.size() > 0) {
    out.b_q = rows.b_q.cwiseProduct(f);
    out.b_k = rows.b_k.cwiseProduct(f);
  }
  return out;
}

/// QK-Clip of one layer: the factors of s_max [h] at τ (head_dim = d / h) applied to its Q/K rows.
template <class T>
QkClipRows<T> qk_clip(const QkClipRows<T>& rows, const Vec<T>& s_max /*[h]*/, double tau) {
  require(s_max.size() >= 1 && rows.W_q.rows() % s_max.size() == 0, "qk_clip", "W_q's rows must be h·d_h for s_max [h]");
  return apply_qk_clip_factors(rows, qk_clip_factors(s_max, tau, rows.W_q.rows() / s_max.size()));
}

}  // namespace gaugelab::core
