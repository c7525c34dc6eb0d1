// Learnable-multiplier (LRM) gauges (seed 002 "vector multipliers"; seed 000 §3.1–3.3; DESIGN §3).
// Math convention y = W x with W [out, in] and the reparameterisation (seed 000 eq. 1)
//   W_ij = r_i · W̄_ij · c_j,   i.e.  W = diag(r)·W̄·diag(c),   r [out], c [in].
// Three reciprocal pairings leave the network function unchanged:
//   Q/K:    q_j = r_Q,j (W̄_Q c_Q⊙x)_j + b_Q,j enters the logits only through Σ_j q_j k_j, so
//           (r_Q, b_Q, r_K, b_K) ↦ (r_Q/g, b_Q/g, r_K·g, b_K·g) per coordinate j of a head (seed 000
//           eqs. 5–6 use one g per head; the biases must follow or the bias terms of q_j k_j change).
//   V/O:    v is only ever averaged (softmax weights) and multiplied by W_O, so scaling value
//           coordinate j by g_j (r_V, b_V) and column j of W_O by 1/g_j (c_O) cancels.
//   LN/next: a LayerNorm output z = gain⊙x̂ + bias feeds layers through their column multipliers
//           c (W diag(c) z), so (gain, bias) ↦ g⊙(gain, bias) with every consumer's c ↦ c/g cancels.
// Head i owns the slice [i·dk, (i+1)·dk) of the Q/K vectors (and [i·dv, (i+1)·dv) of the V/O ones).
#pragma once

#include <vector>

#include "core/gauge_linalg.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// Effective weight diag(r)·W̄·diag(c) [out, in] for r [out], W̄ [out, in], c [in] (seed 000 eq. 1).
template <class T>
Mat<T> effective_weight(const Vec<T>& r, const Mat<T>& wbar, const Vec<T>& c) {
  require(r.size() == wbar.rows() && c.size() == wbar.cols(), "effective_weight", "need r [out], W̄ [out, in], c [in]");
  return r.asDiagonal() * wbar * c.asDiagonal();
}

/// Repeats each of the h per-head factors g [h] over its head's `width` coordinates → [h·width].
template <class T>
Vec<T> expand_per_head(const Vec<T>& g, Index width) {
  Vec<T> out(g.size() * width);
  for (Index i = 0; i < g.size(); ++i) out.segment(i * width, width).setConstant(g(i));
  return out;
}

/// The Q/K row multipliers and biases of one attention layer, all [h·dk].
template <class T>
struct QkMultipliers {
  Index n_heads = 1;
  Vec<T> r_q;  // [h·dk]
  Vec<T> r_k;  // [h·dk]
  Vec<T> b_q;  // [h·dk]
  Vec<T> b_k;  // [h·dk]

  Index d_k() const { return r_q.size() / n_heads; }
};

template <class T>
void require_qk(const QkMultipliers<T>& m, const std::string& what) {
  require(m.n_heads >= 1 && m.r_q.size() % m.n_heads == 0, what, "r_q length must be a multiple of n_heads");
  const Index n = m.r_q.size();
  require(m.r_k.size() == n && m.b_q.size() == n && m.b_k.size() == n, what, "r_q, r_k, b_q, b_k must all be [h·dk]");
}

/// Per-coordinate Q/K gauge g [h·dk] (any nonzero entries): r_Q/g, b_Q/g, r_K·g, b_K·g.
template <class T>
QkMultipliers<T> rescale_qk_multipliers_per_coordinate(const QkMultipliers<T>& m, const Vec<T>& g) {
  require_qk(m, "rescale_qk_multipliers_per_coordinate");
  require(g.size() == m.r_q.size(), "rescale_qk_multipliers_per_coordinate", "g must be [h·dk]");
  require((g.array() != T(0)).all(), "rescale_qk_multipliers_per_coordinate", "g must be nonzero");
  QkMultipliers<T> out = m;
  out.r_q = m.r_q.cwiseQuotient(g);
  out.b_q = m.b_q.cwiseQuotient(g);
  out.r_k = m.r_k.cwiseProduct(g);
  out.b_k = m.b_k.cwiseProduct(g);
  return out;
}

/// Per-head Q/K gauge g [h] (seed 000 eqs. 5–6, biases included): every coordinate of head i uses g_i.
template <class T>
QkMultipliers<T> rescale_qk_multipliers(const QkMultipliers<T>& m, const Vec<T>& g) {
  require_qk(m, "rescale_qk_multipliers");
  require(g.size() == m.n_heads, "rescale_qk_multipliers", "g must be [h]");
  return rescale_qk_multipliers_per_coordinate(m, expand_per_head(g, m.d_k()));
}

/// The V row multipliers, V biases and O column multipliers of one attention layer, all [h·dv].
template <class T>
struct VoMultipliers {
  Index n_heads = 1;
  Vec<T> r_v;  // [h·dv]  rows of W_V (math convention: v = W_V x + b_V, W_V [h·dv, d])
  Vec<T> b_v;  // [h·dv]
  Vec<T> c_o;  // [h·dv]  columns of W_O (y = W_O v + b_O, W_O [d, h·dv])
};

/// V/O pairing, per coordinate g [h·dv] (nonzero): r_V·g, b_V·g, c_O/g.
template <class T>
VoMultipliers<T> rescale_vo_multipliers(const VoMultipliers<T>& m, const Vec<T>& g) {
  const Index n = m.r_v.size();
  require(m.b_v.size() == n && m.c_o.size() == n, "rescale_vo_multipliers", "r_v, b_v, c_o must all be [h·dv]");
  require(g.size() == n, "rescale_vo_multipliers", "g must be [h·dv]");
  require((g.array() != T(0)).all(), "rescale_vo_multipliers", "g must be nonzero");
  VoMultipliers<T> out = m;
  out.r_v = m.r_v.cwiseProduct(g);
  out.b_v = m.b_v.cwiseProduct(g);
  out.c_o = m.c_o.cwiseQuotient(g);
  return out;
}

/// A LayerNorm's affine parameters and the column multipliers of every layer that reads its output
/// (in GPT-2: ln_1 feeds the Q, K and V projections, ln_2 feeds the MLP's first layer).
template <class T>
struct LnColumnPairing {
  Vec<T> gain;                      // [d]
  Vec<T> bias;                      // [d]
  std::vector<Vec<T>> next_columns;  // each [d]: c of one consuming layer
};

/// LN/next-column pairing, g [d] (nonzero): gain·g, bias·g, every consumer's c/g.
template <class T>
LnColumnPairing<T> rescale_ln_columns(const LnColumnPairing<T>& p, const Vec<T>& g) {
  const Index d = p.gain.size();
  require(p.bias.size() == d && g.size() == d, "rescale_ln_columns", "gain, bias and g must all be [d]");
  require((g.array() != T(0)).all(), "rescale_ln_columns", "g must be nonzero");
  LnColumnPairing<T> out = p;
  out.gain = p.gain.cwiseProduct(g);
  out.bias = p.bias.cwiseProduct(g);
  for (auto& c : out.next_columns) {
    require(c.size() == d, "rescale_ln_columns", "every consumer's column multipliers must be [d]");
    c = c.cwiseQuotient(g);
  }
  return out;
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_LRM_GAUGE_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> effective_weight<T>(const Vec<T>&, const Mat<T>&, const Vec<T>&); \
  EXTERN template Vec<T> expand_per_head<T>(const Vec<T>&, Index); \
  EXTERN template void require_qk<T>(const QkMultipliers<T>&, const std::string&); \
  EXTERN template QkMultipliers<T> rescale_qk_multipliers_per_coordinate<T>(const QkMultipliers<T>&, const Vec<T>&); \
  EXTERN template QkMultipliers<T> rescale_qk_multipliers<T>(const QkMultipliers<T>&, const Vec<T>&); \
  EXTERN template VoMultipliers<T> rescale_vo_multipliers<T>(const VoMultipliers<T>&, const Vec<T>&); \
  EXTERN template LnColumnPairing<T> rescale_ln_columns<T>(const LnColumnPairing<T>&, const Vec<T>&);
GAUGELAB_CORE_LRM_GAUGE_INSTANCES(extern, float)
GAUGELAB_CORE_LRM_GAUGE_INSTANCES(extern, double)

}  // namespace gaugelab::core
