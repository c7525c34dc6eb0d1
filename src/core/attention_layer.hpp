// A multi-head attention layer in the GPT-2 packed layout (row-vector convention) and its full gauge
// group (GL(d_k)^h × GL(d_v)^h) ⋊ S_h (seed 001 Theorem 2):
//   head i owns columns [i·dk, (i+1)·dk) of W_q, W_k, b_q, b_k, columns [i·dv, (i+1)·dv) of W_v, b_v,
//   and rows [i·dv, (i+1)·dv) of W_o;   output = concat_i(softmax(Q_i K_iᵀ/√dk) V_i)·W_o + b_o.
// The output bias b_o is added after the heads are summed and is gauge-inert (seed 001 App. A.3).
#pragma once

#include <vector>

#include "core/attention_head.hpp"
#include "core/permutation.hpp"

namespace gaugelab::core {

template <class T>
struct AttentionLayer {
  Index n_heads = 1;
  Mat<T> W_q;     // [d, h·dk]
  Mat<T> W_k;     // [d, h·dk]
  Mat<T> W_v;     // [d, h·dv]
  Mat<T> W_o;     // [h·dv, d]
  RowVec<T> b_q;  // [h·dk]
  RowVec<T> b_k;  // [h·dk]
  RowVec<T> b_v;  // [h·dv]
  RowVec<T> b_o;  // [d]

  Index d_model() const { return W_q.rows(); }
  Index d_k() const { return W_q.cols() / n_heads; }
  Index d_v() const { return W_v.cols() / n_heads; }
};

/// Throws unless the packed blocks are consistent with n_heads.
template <class T>
void require_layer(const AttentionLayer<T>& l, const std::string& what) {
  require(l.n_heads >= 1, what, "n_heads must be >= 1");
  const Index d = l.d_model(), h = l.n_heads;
  require(l.W_q.cols() % h == 0 && l.W_v.cols() % h == 0, what, "W_q/W_v columns must be a multiple of n_heads");
  const Index hk = h * l.d_k(), hv = h * l.d_v();
  require(l.W_k.rows() == d && l.W_k.cols() == hk, what, "W_k must be [d, h·dk] like W_q");
  require(l.W_v.rows() == d, what, "W_v must be [d, h·dv]");
  require(l.W_o.rows() == hv && l.W_o.cols() == d, what, "W_o must be [h·dv, d]");
  require(l.b_q.size() == hk && l.b_k.size() == hk && l.b_v.size() == hv && l.b_o.size() == d, what,
          "biases must be b_q, b_k [h·dk], b_v [h·dv], b_o [d]");
}

/// Copy of head i's blocks.
template <class T>
AttentionHead<T> head(const AttentionLayer<T>& l, Index i) {
  require_layer(l, "head");
  require(i >= 0 && i < l.n_heads, "head", "head index out of range");
  const Index dk = l.d_k(), dv = l.d_v();
  return {l.W_q.middleCols(i * dk, dk), l.W_k.middleCols(i * dk, dk), l.W_v.middleCols(i * dv, dv),
          l.W_o.middleRows(i * dv, dv), l.b_q.segment(i * dk, dk), l.b_k.segment(i * dk, dk),
          l.b_v.segment(i * dv, dv)};
}

/// Writes head i's blocks back into the packed layout (shapes must match the layer's dk, dv, d).
template <class T>
void set_head(AttentionLayer<T>& l, Index i, const AttentionHead<T>& hd) {
  require_layer(l, "set_head");
  require_head(hd, "set_head");
  require(i >= 0 && i < l.n_heads, "set_head", "head index out of range");
  const Index dk = l.d_k(), dv = l.d_v();
  require(hd.d_model() == l.d_model() && hd.d_k() == dk && hd.d_v() == dv, "set_head", "head shape differs from layer");
  l.W_q.middleCols(i * dk, dk) = hd.W_q;
  l.W_k.middleCols(i * dk, dk) = hd.W_k;
  l.W_v.middleCols(i * dv, dv) = hd.W_v;
  l.W_o.middleRows(i * dv, dv) = hd.W_o;
  l.b_q.segment(i * dk, dk) = hd.b_q;
  l.b_k.segment(i * dk, dk) = hd.b_k;
  l.b_v.segment(i * dv, dv) = hd.b_v;
}

/// Layer output [T, d] for X [T, d]: concatenated head values times W_o, plus b_o.
template <class T>
Mat<T> layer_output(const AttentionLayer<T>& l, const Mat<T>& x, const AttentionOptions& options = {}) {
  require_layer(l, "layer_output");
  const Index dv = l.d_v();
  Mat<T> concat(x.rows(), l.n_heads * dv);  // [T, h·dv]
  for (Index i = 0; i < l.n_heads; ++i) {
    const AttentionHead<T> hd = head(l, i);
    const Mat<T> a = softmax_rows(head_logits(hd, x, options));   // [T, T]
    concat.middleCols(i * dv, dv) = a * ((x * hd.W_v).rowwise() + hd.b_v);
  }
  return (concat * l.W_o).rowwise() + l.b_o;
}

/// Per-head gauges: head i gets apply_head_gauge(head_i, s[i] [dk, dk], c[i] [dv, dv]).
template <class T>
AttentionLayer<T> apply_layer_gauge(const AttentionLayer<T>& l, const std::vector<Mat<T>>& s,
                                    const std::vector<Mat<T>>& c) {
  require_layer(l, "apply_layer_gauge");
  require(static_cast<Index>(s.size()) == l.n_heads && static_cast<Index>(c.size()) == l.n_heads,
          "apply_layer_gauge", "need one S and one C per head");
  AttentionLayer<T> out = l;
  for (Index i = 0; i < l.n_heads; ++i)
    set_head(out, i, apply_head_gauge(head(l, i), s[static_cast<std::size_t>(i)], c[static_cast<std::size_t>(i)]));
  return out;
}

/// Reorders heads in the gather convention: new head j = old head perm[j] (core/permutation.hpp).
/// b_o is untouched: the sum over heads does not depend on their order.
template <class T>
AttentionLayer<T> permute_heads(const AttentionLayer<T>& l, const Permutation& perm) {
  require_layer(l, "permute_heads");
  require_permutation(perm, l.n_heads, "permute_heads");
  AttentionLayer<T> out = l;
  for (Index j = 0; j < l.n_heads; ++j) set_head(out, j, head(l, perm[static_cast<std::size_t>(j)]));
  return out;
}

/// One element of (GL(d_k)^h × GL(d_v)^h) ⋊ S_h: first the per-head gauges (indexed by the heads'
/// current positions), then the permutation.
template <class T>
struct LayerGauge {
  std::vector<Mat<T>> s;  // h × [dk, dk]
  std::vector<Mat<T>> c;  // h × [dv, dv]
  Permutation perm;       // gather convention
};

template <class T>
AttentionLayer<T> apply_layer_gauge(const AttentionLayer<T>& l, const LayerGauge<T>& g) {
  return permute_heads(apply_layer_gauge(l, g.s, g.c), g.perm);
}

/// The identity element for h heads of sizes dk, dv.
template <class T>
LayerGauge<T> identity_layer_gauge(Index h, Index dk, Index dv) {
  return {std::vector<Mat<T>>(static_cast<std::size_t>(h), Mat<T>::Identity(dk, dk)),
          std::vector<Mat<T>>(static_cast<std::size_t>(h), Mat<T>::Identity(dv, dv)), identity_permutation(h)};
}

/// "g first, then k": apply(apply(L, g), k) == apply(L, compose(g, k)). Old head i sits at position
/// p_g⁻¹[i] after g, where k acts on it, so S_i = S^g_i · S^k_{p_g⁻¹[i]} (same for C), and p = p_g ∘ p_k.
template <class T>
LayerGauge<T> compose_layer_gauges(const LayerGauge<T>& g, const LayerGauge<T>& k) {
  const Permutation ginv = inverse_permutation(g.perm);
  LayerGauge<T> out;
  for (std::size_t i = 0; i < g.s.size(); ++i) {
    const auto j = static_cast<std::size_t>(ginv[i]);
    out.s.push_back(g.s[i] * k.s[j]);
    out.c.push_back(g.c[i] * k.c[j]);
  }
  out.perm = compose_permutations(g.perm, k.perm);
  return out;
}

/// The inverse element: compose(g, inverse(g)) is the identity. Position j after g holds old head
/// p_g[j], so the undoing gauge there is (S^g_{p_g[j]})⁻¹.
template <class T>
LayerGauge<T> inverse_layer_gauge(const LayerGauge<T>& g) {
  LayerGauge<T> out;
  for (std::size_t j = 0; j < g.s.size(); ++j) {
    const auto i = static_cast<std::size_t>(g.perm[j]);
    out.s.push_back(g.s[i].inverse());
    out.c.push_back(g.c[i].inverse());
  }
  out.perm = inverse_permutation(g.perm);
  return out;
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_ATTENTION_LAYER_INSTANCES(EXTERN, T) \
  EXTERN template void require_layer<T>(const AttentionLayer<T>&, const std::string&); \
  EXTERN template AttentionHead<T> head<T>(const AttentionLayer<T>&, Index); \
  EXTERN template void set_head<T>(AttentionLayer<T>&, Index, const AttentionHead<T>&); \
  EXTERN template Mat<T> layer_output<T>(const AttentionLayer<T>&, const Mat<T>&, const AttentionOptions&); \
  EXTERN template AttentionLayer<T> apply_layer_gauge<T>(const AttentionLayer<T>&, const std::vector<Mat<T>>&, const std::vector<Mat<T>>&); \
  EXTERN template AttentionLayer<T> permute_heads<T>(const AttentionLayer<T>&, const Permutation&); \
  EXTERN template AttentionLayer<T> apply_layer_gauge<T>(const AttentionLayer<T>&, const LayerGauge<T>&); \
  EXTERN template LayerGauge<T> identity_layer_gauge<T>(Index, Index, Index); \
  EXTERN template LayerGauge<T> compose_layer_gauges<T>(const LayerGauge<T>&, const LayerGauge<T>&); \
  EXTERN template LayerGauge<T> inverse_layer_gauge<T>(const LayerGauge<T>&);
GAUGELAB_CORE_ATTENTION_LAYER_INSTANCES(extern, float)
GAUGELAB_CORE_ATTENTION_LAYER_INSTANCES(extern, double)

}  // namespace gaugelab::core
