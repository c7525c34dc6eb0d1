// Aligning one model to another before averaging or interpolating them (seed 001 §7.4, Prop. 47,
// App. H.3 Algorithm 3), and the hidden-unit weight matching an MLP needs beside it.
//
// Two independently trained models sit at different points of (near-)equal orbits, so θ_A and θ_B are
// averaged only after B is moved by the group element g* that brings it nearest to A. For one
// attention layer G = (GL(d_k)^h × GL(d_v)^h) ⋊ S_h; the seed reduces the search in three steps:
//   1. both layers to a canonical slice (gauge_fix_qr.hpp or the Gram slice), which removes the
//      triangular/symmetric part of each GL and leaves a residual O(d_k) × O(d_v) per head (Prop. 45);
//   2. the head permutation by the Hungarian algorithm on a head-to-head cost (assignment.hpp);
//   3. the residual orthogonal freedom per matched head pair by orthogonal Procrustes.
// An orthogonal A is its own inverse transpose, so the Q/K gauge (W_q A, W_k A⁻ᵀ) moves W_q and W_k by
// the same A (the biases too), and the V/O gauge (W_v C, C⁻¹ W_o) moves W_v and W_oᵀ by the same C:
//   Q/K stack [W_q; b_q; W_k; b_k]  [2(d+1), d_k]  ↦  stack · A
//   V/O stack [W_v; b_v; W_oᵀ]      [2d+1, d_v]     ↦  stack · C
// so step 3 is one Procrustes problem per sector, and the distance it leaves is the head pair's
// distance minimised over the residual group: the cost we match heads by (HeadCost::procrustes), which
// makes steps 2–3 the exact minimiser of ‖θ_A − g(θ_B)‖_F over S_h × O(d_k)^h × O(d_v)^h on the slice.
// Algorithm 3 instead matches by D_ij = ‖W_q,A^i − W_q,B^j‖_F + ‖W_k,A^i − W_k,B^j‖_F before Procrustes
// (HeadCost::seed), a cost that depends on the residual rotation left by the slice; both are here so
// the difference can be measured. Algorithm 3 aligns only the Q/K sector; Prop. 47 names both, and we
// align both (the V/O residual O(d_v) is as large).
//
// MLP hidden units have no continuous gauge (GELU is not homogeneous) but every permutation of them is
// a symmetry; matching them is a linear assignment on the units' incoming and outgoing weights
// (weight matching; Ainsworth et al., seed 001 ref. [1]).
#pragma once

#include <Eigen/SVD>

#include "core/assignment.hpp"
#include "core/attention_layer.hpp"
#include "core/gauge_linalg.hpp"

namespace gaugelab::core {

/// The orthogonal R [k, k] minimising ‖target − source·R‖_F for target, source [n, k]: R = U·Vᵀ from
/// the SVD U Σ Vᵀ of sourceᵀ·target (orthogonal Procrustes; reflections allowed — the residual group
/// is O(k), not SO(k)).
template <class T>
Mat<T> orthogonal_procrustes(const Mat<T>& target, const Mat<T>& source) {
  require(target.rows() == source.rows() && target.cols() == source.cols(), "orthogonal_procrustes",
          "target and source must have the same shape [n, k]");
  const Mat<T> m = source.transpose() * target;  // [k, k]
  const Eigen::JacobiSVD<Mat<T>> svd(m, Eigen::ComputeFullU | Eigen::ComputeFullV);
  return svd.matrixU() * svd.matrixV().transpose();
}

/// [W_q; b_q; W_k; b_k] [2(d+1), d_k]: the rows an orthogonal Q/K gauge A moves together (stack·A).
template <class T>
Mat<T> qk_stack(const AttentionHead<T>& h) {
  const Index d = h.d_model();
  Mat<T> s(2 * (d + 1), h.d_k());
  s << h.W_q, h.b_q, h.W_k, h.b_k;
  return s;
}

/// [W_v; b_v; W_oᵀ] [2d+1, d_v]: the rows an orthogonal V/O gauge C moves together (stack·C).
template <class T>
Mat<T> vo_stack(const AttentionHead<T>& h) {
  const Index d = h.d_model();
  Mat<T> s(2 * d + 1, h.d_v());
  s << h.W_v, h.b_v, h.W_o.transpose();
  return s;
}

/// One head of B matched to one head of A over the residual group O(d_k) × O(d_v).
template <class T>
struct HeadMatch {
  Mat<T> X;        // [d_k, d_k] orthogonal: the Q/K gauge applied to B's head
  Mat<T> Y;        // [d_v, d_v] orthogonal: the V/O gauge applied to B's head
  T distance2 = 0; // ‖head_A − g(head_B)‖² after it (every block, biases included)
};

/// The residual-group alignment of head b to head a (both on the same canonical slice).
template <class T>
HeadMatch<T> match_head(const AttentionHead<T>& a, const AttentionHead<T>& b) {
  require(a.d_model() == b.d_model() && a.d_k() == b.d_k() && a.d_v() == b.d_v(), "match_head",
          "the two heads must have the same shapes");
  const Mat<T> qa = qk_stack(a), qb = qk_stack(b), va = vo_stack(a), vb = vo_stack(b);
  HeadMatch<T> m;
  m.X = orthogonal_procrustes<T>(qa, qb);
  m.Y = orthogonal_procrustes<T>(va, vb);
  m.distance2 = (qa - qb * m.X).squaredNorm() + (va - vb * m.Y).squaredNorm();
  return m;
}

/// The cost the head permutation is chosen by (see the file comment).
enum class HeadCost {
  procrustes,  // ‖head_A^i − head_B^j‖² after the best residual rotation: the exact minimiser
  seed,        // Algorithm 3: ‖W_q,A^i − W_q,B^j‖_F + ‖W_k,A^i − W_k,B^j‖_F, no rotation
};

template <class T>
struct LayerAlignment {
  LayerGauge<T> gauge;            // apply_layer_gauge(B, gauge) is B aligned to A (orthogonal s, c)
  std::vector<T> head_distance2;  // per position j: ‖head_A^j − aligned head_B^j‖² (after Procrustes)
};

/// Steps 2–3 for two layers already on the same canonical slice: the permutation by the Hungarian
/// algorithm on `cost`, then the residual rotations of each matched pair (identity when !procrustes).
template <class T>
LayerAlignment<T> align_layer_heads(const AttentionLayer<T>& a, const AttentionLayer<T>& b, HeadCost cost,
                                    bool procrustes = true) {
  require_layer(a, "align_layer_heads");
  require_layer(b, "align_layer_heads");
  require(a.n_heads == b.n_heads && a.d_model() == b.d_model() && a.d_k() == b.d_k() && a.d_v() == b.d_v(),
          "align_layer_heads", "the two layers must have the same shapes");
  const Index h = a.n_heads;
  std::vector<std::vector<HeadMatch<T>>> pair(static_cast<std::size_t>(h));
  Mat<double> c(h, h);  // [h, h]: row = A's head (position), column = B's head
  for (Index i = 0; i < h; ++i) {
    const AttentionHead<T> ha = head(a, i);
    for (Index j = 0; j < h; ++j) {
      const AttentionHead<T> hb = head(b, j);
      pair[static_cast<std::size_t>(i)].push_back(match_head(ha, hb));
      c(i, j) = cost == HeadCost::procrustes
                    ? static_cast<double>(pair[static_cast<std::size_t>(i)].back().distance2)
                    : static_cast<double>((ha.W_q - hb.W_q).norm() + (ha.W_k - hb.W_k).norm());
    }
  }
  LayerAlignment<T> out;
  out.gauge = identity_layer_gauge<T>(h, a.d_k(), a.d_v());
  out.gauge.perm = min_cost_assignment(c);
  for (Index i = 0; i < h; ++i) {
    const auto j = static_cast<std::size_t>(out.gauge.perm[static_cast<std::size_t>(i)]);
    const HeadMatch<T>& m = pair[static_cast<std::size_t>(i)][j];
    if (procrustes) {
      out.gauge.s[j] = m.X;  // gauges are indexed by B's own (pre-permutation) head index
      out.gauge.c[j] = m.Y;
      out.head_distance2.push_back(m.distance2);
    } else {
      const AttentionHead<T> ha = head(a, i), hb = head(b, static_cast<Index>(j));
      out.head_distance2.push_back((qk_stack(ha) - qk_stack(hb)).squaredNorm() +
                                   (vo_stack(ha) - vo_stack(hb)).squaredNorm());
    }
  }
  return out;
}

/// Weight matching of H hidden units: unit j of A is paired with unit p[j] of B so that
/// Σ_j ⟨in_a[j], in_b[p[j]]⟩ + ⟨out_a[j], out_b[p[j]]⟩ is largest, which for fixed norms is the smallest
/// ‖A − p(B)‖² over permutations. in_* [H, a]: each unit's incoming weights (and bias) as a row;
/// out_* [H, b]: its outgoing weights as a row. Gather convention: B's units reordered by p.
template <class T>
Permutation match_units(const Mat<T>& in_a, const Mat<T>& out_a, const Mat<T>& in_b, const Mat<T>& out_b) {
  require(in_a.rows() == out_a.rows() && in_b.rows() == in_a.rows() && out_b.rows() == out_a.rows() &&
              in_a.cols() == in_b.cols() && out_a.cols() == out_b.cols(),
          "match_units", "in_a, in_b [H, a] and out_a, out_b [H, b] expected");
  const Mat<double> score = (in_a * in_b.transpose() + out_a * out_b.transpose()).template cast<double>();  // [H, H]
  return max_score_assignment(score);
}

}  // namespace gaugelab::core
