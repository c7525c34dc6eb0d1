// Seeded random parameter sets for tests (every tier may reuse these): factor pairs, attention heads
// and layers, ReLU nets, LRM multipliers, and random elements of the layer gauge group.
// Entries are drawn in double by core/random.hpp and cast to T, so float and double tests with the
// same seed see the same parameters up to the cast.
#pragma once

#include <cmath>

#include "core/attention_gauge.hpp"
#include "core/factor_gauge.hpp"
#include "core/gauge_sampling.hpp"
#include "core/lrm_gauge.hpp"
#include "core/random.hpp"
#include "core/relu_gauge.hpp"

namespace gaugelab::test {

using core::Index;
using core::Mat;
using core::Rng;
using core::RowVec;
using core::Vec;

template <class T>
Mat<T> gaussian(Rng& rng, Index rows, Index cols, double stddev = 1.0) {
  return core::randn<double>(rng, rows, cols, stddev).template cast<T>();
}

template <class T>
Vec<T> gaussian_vec(Rng& rng, Index n, double stddev = 1.0) {
  return core::randn_vec<double>(rng, n, stddev).template cast<T>();
}

template <class T>
RowVec<T> gaussian_row(Rng& rng, Index n, double stddev = 1.0) {
  return gaussian_vec<T>(rng, n, stddev).transpose();
}

/// Positive vector exp(N(0, log_std²)) [n]: multiplier-like entries around 1.
template <class T>
Vec<T> lognormal_vec(Rng& rng, Index n, double log_std) {
  return core::randn_vec<double>(rng, n, log_std).array().exp().matrix().template cast<T>();
}

/// A = N(0,1) [m, r], B = N(0,1) [n, r].
template <class T>
core::FactorPair<T> random_factor_pair(Rng& rng, Index m, Index n, Index r) {
  return {gaussian<T>(rng, m, r), gaussian<T>(rng, n, r)};
}

/// Weights N(0, 1/d) (logits O(1)), biases N(0, 0.1²); W_o N(0, 1/dv).
template <class T>
core::AttentionHead<T> random_head(Rng& rng, Index d, Index dk, Index dv) {
  const double sd = 1.0 / std::sqrt(static_cast<double>(d));
  const double so = 1.0 / std::sqrt(static_cast<double>(dv));
  return {gaussian<T>(rng, d, dk, sd), gaussian<T>(rng, d, dk, sd), gaussian<T>(rng, d, dv, sd),
          gaussian<T>(rng, dv, d, so), gaussian_row<T>(rng, dk, 0.1), gaussian_row<T>(rng, dk, 0.1),
          gaussian_row<T>(rng, dv, 0.1)};
}

/// h heads in the packed layout, same scales as random_head, b_o N(0, 0.1²).
template <class T>
core::AttentionLayer<T> random_layer(Rng& rng, Index d, Index h, Index dk, Index dv) {
  const double sd = 1.0 / std::sqrt(static_cast<double>(d));
  const double so = 1.0 / std::sqrt(static_cast<double>(h * dv));
  core::AttentionLayer<T> l;
  l.n_heads = h;
  l.W_q = gaussian<T>(rng, d, h * dk, sd);
  l.W_k = gaussian<T>(rng, d, h * dk, sd);
  l.W_v = gaussian<T>(rng, d, h * dv, sd);
  l.W_o = gaussian<T>(rng, h * dv, d, so);
  l.b_q = gaussian_row<T>(rng, h * dk, 0.1);
  l.b_k = gaussian_row<T>(rng, h * dk, 0.1);
  l.b_v = gaussian_row<T>(rng, h * dv, 0.1);
  l.b_o = gaussian_row<T>(rng, d, 0.1);
  return l;
}

/// One-hidden-layer ReLU net with N(0,1) weights and biases (seed 004 eq. 1).
template <class T>
core::ReluNet<T> random_relu_net(Rng& rng, Index d, Index hidden, Index m) {
  return {gaussian<T>(rng, hidden, d), gaussian_vec<T>(rng, hidden), gaussian<T>(rng, m, hidden),
          gaussian_vec<T>(rng, m)};
}

/// LRM Q/K multipliers exp(N(0, 0.5²)) (trained-looking, away from the init value 1) and N(0, 0.1²) biases.
template <class T>
core::QkMultipliers<T> random_qk_multipliers(Rng& rng, Index h, Index dk) {
  return {h, lognormal_vec<T>(rng, h * dk, 0.5), lognormal_vec<T>(rng, h * dk, 0.5), gaussian_vec<T>(rng, h * dk, 0.1),
          gaussian_vec<T>(rng, h * dk, 0.1)};
}

/// A random element of (GL(dk)^h × GL(dv)^h) ⋊ S_h with per-head condition number kappa.
template <class T>
core::LayerGauge<T> random_layer_gauge(Rng& rng, Index h, Index dk, Index dv, double kappa) {
  core::LayerGauge<T> g;
  for (Index i = 0; i < h; ++i) {
    g.s.push_back(core::random_gl<T>(rng, dk, kappa));
    g.c.push_back(core::random_gl<T>(rng, dv, kappa));
  }
  g.perm = core::random_permutation(rng, h);
  return g;
}

/// A pre-LN attention block with learnable multipliers in the math convention (seed 000 eq. 1):
///   z = x̂ ⊙ gain + bias  →  q = W_Q z + b_Q, k, v likewise  →  attention  →  y = W_O a + b_O,
/// W_P = diag(r_P)·W̄_P·diag(c_P). It exists so tests can check that every LRM pairing (Q/K, V/O,
/// LN/next columns) leaves the block output unchanged. ln.next_columns = {c_Q, c_K, c_V}.
template <class T>
struct LrmBlock {
  core::LnColumnPairing<T> ln;  // gain [d], bias [d], next_columns {c_Q, c_K, c_V} each [d]
  core::QkMultipliers<T> qk;    // r_Q, r_K, b_Q, b_K [h·dk]
  core::VoMultipliers<T> vo;    // r_V, b_V, c_O [h·dv]
  Mat<T> wbar_q;                // [h·dk, d]
  Mat<T> wbar_k;                // [h·dk, d]
  Mat<T> wbar_v;                // [h·dv, d]
  Mat<T> wbar_o;                // [d, h·dv]
  Vec<T> r_o;                   // [d]
  RowVec<T> b_o;                // [d]
};

/// The block as a row-convention AttentionLayer acting on z (effective weights, transposed).
template <class T>
core::AttentionLayer<T> lrm_block_layer(const LrmBlock<T>& b) {
  core::AttentionLayer<T> l;
  l.n_heads = b.qk.n_heads;
  l.W_q = core::effective_weight(b.qk.r_q, b.wbar_q, b.ln.next_columns[0]).transpose();
  l.W_k = core::effective_weight(b.qk.r_k, b.wbar_k, b.ln.next_columns[1]).transpose();
  l.W_v = core::effective_weight(b.vo.r_v, b.wbar_v, b.ln.next_columns[2]).transpose();
  l.W_o = core::effective_weight(b.r_o, b.wbar_o, b.vo.c_o).transpose();
  l.b_q = b.qk.b_q.transpose();
  l.b_k = b.qk.b_k.transpose();
  l.b_v = b.vo.b_v.transpose();
  l.b_o = b.b_o;
  return l;
}

/// Block output [T, d] for normalised inputs x̂ [T, d].
template <class T>
Mat<T> lrm_block_output(const LrmBlock<T>& b, const Mat<T>& xhat) {
  const Mat<T> z = (xhat * b.ln.gain.asDiagonal()).rowwise() + b.ln.bias.transpose();
  return core::layer_output(lrm_block_layer(b), z);
}

/// Random block: W̄ N(0, 1/fan_in), multipliers exp(N(0, 0.5²)), biases N(0, 0.1²).
template <class T>
LrmBlock<T> random_lrm_block(Rng& rng, Index d, Index h, Index dk, Index dv) {
  const double sd = 1.0 / std::sqrt(static_cast<double>(d)), so = 1.0 / std::sqrt(static_cast<double>(h * dv));
  LrmBlock<T> b;
  b.ln = {lognormal_vec<T>(rng, d, 0.5), gaussian_vec<T>(rng, d, 0.1),
          {lognormal_vec<T>(rng, d, 0.5), lognormal_vec<T>(rng, d, 0.5), lognormal_vec<T>(rng, d, 0.5)}};
  b.qk = random_qk_multipliers<T>(rng, h, dk);
  b.vo = {h, lognormal_vec<T>(rng, h * dv, 0.5), gaussian_vec<T>(rng, h * dv, 0.1), lognormal_vec<T>(rng, h * dv, 0.5)};
  b.wbar_q = gaussian<T>(rng, h * dk, d, sd);
  b.wbar_k = gaussian<T>(rng, h * dk, d, sd);
  b.wbar_v = gaussian<T>(rng, h * dv, d, sd);
  b.wbar_o = gaussian<T>(rng, d, h * dv, so);
  b.r_o = lognormal_vec<T>(rng, d, 0.5);
  b.b_o = gaussian_row<T>(rng, d, 0.1);
  return b;
}

}  // namespace gaugelab::test
