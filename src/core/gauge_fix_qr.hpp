// The QR canonical slice of an attention layer (seed 001 §7.2, Prop. 45, App. H Algorithm 1).
//
// Groups removed, per head: the upper-triangular-with-positive-diagonal part of GL(d_k) and of
// GL(d_v) (a residual O(d_k) × O(d_v) stays, Remark 49), and then the head permutations S_h.
// Why this representative: thin QR with diag(R) > 0 is unique and numerically stable, and it makes
// the query and value projections column-orthonormal (W_qᵀW_q = I, W_vᵀW_v = I), so all of the
// head's scale and shape sits in W_k and W_o; the paper's default slice (§7.2). Heads are then sorted
// by ‖W_K⁽ⁱ⁾‖_F in DESCENDING order (Algorithm 1 lines 21–23); ties keep their original order.
//
//   Q/K: W_q = Q_q R_q  →  W_q ← Q_q,  W_k ← W_k R_qᵀ,  b_q ← b_q R_q⁻¹,  b_k ← b_k R_qᵀ   (gauge S = R_q⁻¹)
//   V/O: W_v = Q_v R_v  →  W_v ← Q_v,  W_o ← R_v W_o,   b_v ← b_v R_v⁻¹                (gauge C = R_v⁻¹)
// The global output bias b_o is untouched (Algorithm 1 line 19).
#pragma once

#include <utility>
#include <vector>

#include "core/attention_layer.hpp"
#include "core/gauge_linalg.hpp"
#include "core/permutation.hpp"

namespace gaugelab::core {

template <class T>
struct QrSliceResult {
  AttentionHead<T> head;  // canonical head: W_qᵀW_q = I, W_vᵀW_v = I
  Mat<T> R_q;             // [dk, dk] upper triangular, diag > 0 (the gauge applied is R_q⁻¹)
  Mat<T> R_v;             // [dv, dv] upper triangular, diag > 0 (the gauge applied is R_v⁻¹)
};

/// b R⁻¹ for a row vector b [k] and upper-triangular R [k, k]: solve Rᵀ xᵀ = bᵀ (lower triangular).
template <class T>
RowVec<T> row_times_upper_inverse(const RowVec<T>& b, const Mat<T>& r) {
  return r.transpose().template triangularView<Eigen::Lower>().solve(b.transpose()).transpose();
}

/// Algorithm 1 lines 4–18 for one head (needs d >= dk, d >= dv and full column rank, seed 001 A4).
template <class T>
QrSliceResult<T> qr_canonical_head(const AttentionHead<T>& h) {
  require_head(h, "qr_canonical_head");
  QrSliceResult<T> out{h, Mat<T>(), Mat<T>()};
  ThinQR<T> qk = thin_qr_positive(h.W_q);
  out.head.W_q = qk.q;
  out.head.W_k = h.W_k * qk.r.transpose();
  out.head.b_q = row_times_upper_inverse(h.b_q, qk.r);
  out.head.b_k = h.b_k * qk.r.transpose();
  ThinQR<T> vo = thin_qr_positive(h.W_v);
  out.head.W_v = vo.q;
  out.head.W_o = vo.r * h.W_o;
  out.head.b_v = row_times_upper_inverse(h.b_v, vo.r);
  out.R_q = std::move(qk.r);
  out.R_v = std::move(vo.r);
  return out;
}

/// Algorithm 1 lines 21–22: the gather permutation that sorts heads by ‖W_K⁽ⁱ⁾‖_F, largest first.
template <class T>
Permutation head_order_by_key_norm(const AttentionLayer<T>& l) {
  require_layer(l, "head_order_by_key_norm");
  std::vector<double> norms;
  for (Index i = 0; i < l.n_heads; ++i)
    norms.push_back(static_cast<double>(l.W_k.middleCols(i * l.d_k(), l.d_k()).norm()));
  return argsort_descending(norms);
}

template <class T>
struct CanonicalLayer {
  AttentionLayer<T> layer;  // canonical representative
  Permutation perm;         // gather permutation applied last: canonical head j = old head perm[j]
  std::vector<Mat<T>> R_q;  // per OLD head index, [dk, dk]
  std::vector<Mat<T>> R_v;  // per OLD head index, [dv, dv]
};

/// Algorithm 1: QR slice for every head, then descending ‖W_K‖_F ordering.
template <class T>
CanonicalLayer<T> canonicalize_layer(const AttentionLayer<T>& l) {
  require_layer(l, "canonicalize_layer");
  CanonicalLayer<T> out;
  AttentionLayer<T> sliced = l;
  for (Index i = 0; i < l.n_heads; ++i) {
    QrSliceResult<T> r = qr_canonical_head(head(l, i));
    set_head(sliced, i, r.head);
    out.R_q.push_back(std::move(r.R_q));
    out.R_v.push_back(std::move(r.R_v));
  }
  out.perm = head_order_by_key_norm(sliced);
  out.layer = permute_heads(sliced, out.perm);
  return out;
}

// Compiled once for float and double in core/gauge_fix_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_FIX_QR_INSTANCES(EXTERN, T) \
  EXTERN template RowVec<T> row_times_upper_inverse<T>(const RowVec<T>&, const Mat<T>&); \
  EXTERN template QrSliceResult<T> qr_canonical_head<T>(const AttentionHead<T>&); \
  EXTERN template Permutation head_order_by_key_norm<T>(const AttentionLayer<T>&); \
  EXTERN template CanonicalLayer<T> canonicalize_layer<T>(const AttentionLayer<T>&);
GAUGELAB_CORE_GAUGE_FIX_QR_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_FIX_QR_INSTANCES(extern, double)

}  // namespace gaugelab::core
