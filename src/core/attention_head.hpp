// One attention head in the row-vector convention (seed 001 §2, eq. 2.2; DESIGN §3):
//   Q = X·W_q + b_q,  K = X·W_k + b_k,  V = X·W_v + b_v     (X [T, d], biases added to every row)
//   logits = Q·Kᵀ/√d_k,   output = softmax(logits)·V·W_o
// and its per-head gauge group GL(d_k) × GL(d_v) (seed 001 Definition 1 and Proposition 12):
//   (W_q, b_q, W_k, b_k) ↦ (W_q S, b_q S, W_k S⁻ᵀ, b_k S⁻ᵀ)       S ∈ GL(d_k)
//   (W_v, b_v, W_o)      ↦ (W_v C, b_v C, C⁻¹ W_o)               C ∈ GL(d_v)
// (Q S)(K S⁻ᵀ)ᵀ = Q Kᵀ and (V C)(C⁻¹ W_o) = V W_o, so logits and output are unchanged.
#pragma once

#include <cmath>
#include <limits>

#include "core/gauge_linalg.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

template <class T>
struct AttentionHead {
  Mat<T> W_q;     // [d, dk]
  Mat<T> W_k;     // [d, dk]
  Mat<T> W_v;     // [d, dv]
  Mat<T> W_o;     // [dv, d]
  RowVec<T> b_q;  // [dk]  (row vector: Q = X W_q + b_q)
  RowVec<T> b_k;  // [dk]
  RowVec<T> b_v;  // [dv]

  Index d_model() const { return W_q.rows(); }
  Index d_k() const { return W_q.cols(); }
  Index d_v() const { return W_v.cols(); }
};

/// Forward options for one head.
struct AttentionOptions {
  bool causal = false;  // mask key positions j > i (logits set to −∞ there); default: no mask
};

/// Throws unless every block of the head has consistent shapes.
template <class T>
void require_head(const AttentionHead<T>& h, const std::string& what) {
  const Index d = h.d_model(), dk = h.d_k(), dv = h.d_v();
  require(h.W_k.rows() == d && h.W_k.cols() == dk, what, "W_k must be [d, dk] like W_q");
  require(h.W_v.rows() == d, what, "W_v must be [d, dv]");
  require(h.W_o.rows() == dv && h.W_o.cols() == d, what, "W_o must be [dv, d]");
  require(h.b_q.size() == dk && h.b_k.size() == dk && h.b_v.size() == dv, what, "biases must be b_q, b_k [dk], b_v [dv]");
}

/// Row-wise softmax of logits [T, T]; −∞ entries get weight 0 (each row needs one finite entry).
template <class T>
Mat<T> softmax_rows(const Mat<T>& logits) {
  Mat<T> p(logits.rows(), logits.cols());
  for (Index i = 0; i < logits.rows(); ++i) {
    const T mx = logits.row(i).maxCoeff();
    p.row(i) = (logits.row(i).array() - mx).exp().matrix();
    p.row(i) /= p.row(i).sum();
  }
  return p;
}

/// Pre-softmax scores Q·Kᵀ/√d_k [T, T] for X [T, d]; with options.causal, entries j > i are −∞.
template <class T>
Mat<T> head_logits(const AttentionHead<T>& h, const Mat<T>& x, const AttentionOptions& options = {}) {
  require_head(h, "head_logits");
  require(x.cols() == h.d_model(), "head_logits", "X must be [T, d_model]");
  const Mat<T> q = (x * h.W_q).rowwise() + h.b_q;  // [T, dk]
  const Mat<T> k = (x * h.W_k).rowwise() + h.b_k;  // [T, dk]
  Mat<T> logits = (q * k.transpose()) / std::sqrt(static_cast<T>(h.d_k()));
  if (options.causal)
    for (Index i = 0; i < logits.rows(); ++i)
      for (Index j = i + 1; j < logits.cols(); ++j) logits(i, j) = -std::numeric_limits<T>::infinity();
  return logits;
}

/// Head contribution to the layer output: softmax(logits)·V·W_o [T, d] (no output bias: that is the layer's).
template <class T>
Mat<T> head_output(const AttentionHead<T>& h, const Mat<T>& x, const AttentionOptions& options = {}) {
  const Mat<T> a = softmax_rows(head_logits(h, x, options));  // [T, T]
  const Mat<T> v = (x * h.W_v).rowwise() + h.b_v;            // [T, dv]
  return a * v * h.W_o;
}

/// Query–key gauge S [dk, dk]: W_q → W_q S, b_q → b_q S, W_k → W_k S⁻ᵀ, b_k → b_k S⁻ᵀ (seed 001 Prop. 12).
template <class T>
AttentionHead<T> apply_qk_gauge(const AttentionHead<T>& h, const Mat<T>& s) {
  require_head(h, "apply_qk_gauge");
  require_square(s, h.d_k(), "apply_qk_gauge");
  AttentionHead<T> out = h;
  out.W_q = h.W_q * s;
  out.b_q = h.b_q * s;
  out.W_k = times_inverse_transpose(h.W_k, s);
  out.b_k = times_inverse_transpose(Mat<T>(h.b_k), s);
  return out;
}

/// Value–output gauge C [dv, dv]: W_v → W_v C, b_v → b_v C, W_o → C⁻¹ W_o (seed 001 Prop. 12).
template <class T>
AttentionHead<T> apply_vo_gauge(const AttentionHead<T>& h, const Mat<T>& c) {
  require_head(h, "apply_vo_gauge");
  require_square(c, h.d_v(), "apply_vo_gauge");
  AttentionHead<T> out = h;
  out.W_v = h.W_v * c;
  out.b_v = h.b_v * c;
  out.W_o = inverse_times(c, h.W_o);
  return out;
}

/// Both sectors at once: the element (S, C) of GL(d_k) × GL(d_v).
template <class T>
AttentionHead<T> apply_head_gauge(const AttentionHead<T>& h, const Mat<T>& s, const Mat<T>& c) {
  return apply_vo_gauge(apply_qk_gauge(h, s), c);
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_ATTENTION_HEAD_INSTANCES(EXTERN, T) \
  EXTERN template void require_head<T>(const AttentionHead<T>&, const std::string&); \
  EXTERN template Mat<T> softmax_rows<T>(const Mat<T>&); \
  EXTERN template Mat<T> head_logits<T>(const AttentionHead<T>&, const Mat<T>&, const AttentionOptions&); \
  EXTERN template Mat<T> head_output<T>(const AttentionHead<T>&, const Mat<T>&, const AttentionOptions&); \
  EXTERN template AttentionHead<T> apply_qk_gauge<T>(const AttentionHead<T>&, const Mat<T>&); \
  EXTERN template AttentionHead<T> apply_vo_gauge<T>(const AttentionHead<T>&, const Mat<T>&); \
  EXTERN template AttentionHead<T> apply_head_gauge<T>(const AttentionHead<T>&, const Mat<T>&, const Mat<T>&);
GAUGELAB_CORE_ATTENTION_HEAD_INSTANCES(extern, float)
GAUGELAB_CORE_ATTENTION_HEAD_INSTANCES(extern, double)

}  // namespace gaugelab::core
