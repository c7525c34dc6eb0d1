// Gauge coordinates and gauge metrics (DESIGN §3 "Gauge coordinates and metrics").
//   ReLU u/v coordinates          seed 004 eqs. 7, 13–15
//   LRM per-head scales, drift    seed 000 eq. 3
//   Gram imbalance                seed 003 §3 (the Grams AᵀA, BᵀB that plain GD exposes)
//   Q/K covariance imbalance      seed 001 App. G.4, Table 8
//   value orthonormality          seed 001 App. G.4, Table 8
//   invariance error Δ_inv        seed 004 eq. 11 (+ relative and max errors, seed 001 Tables 5–6)
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention_head.hpp"
#include "core/factor_gauge.hpp"
#include "core/lrm_gauge.hpp"
#include "core/relu_gauge.hpp"

namespace gaugelab::core {

// ---------------------------------------------------------------- ReLU (seed 004)

/// Per-neuron coordinates of seed 004, all [H]. n1 is the norm of W1's row only: eq. (7) defines
/// n₁ᵢ = ‖W₁,ᵢ‖₂ without the bias b₁ᵢ, even though b₁ is rescaled by the gauge too; we follow it.
template <class T>
struct ReluCoordinates {
  Vec<T> n1;     // ‖W1[i, :]‖₂          (eq. 7 / 13)
  Vec<T> n2;     // ‖W2[:, i]‖₂          (eq. 7 / 13)
  Vec<T> alpha;  // log(n1 + ε)          (eq. 14)
  Vec<T> beta;   // log(n2 + ε)          (eq. 14)
  Vec<T> u;      // α + β  (invariant when ε = 0)         (eq. 15)
  Vec<T> v;      // α − β  (gauge: v → v + 2 log s, ε = 0) (eq. 15)
};

template <class T>
ReluCoordinates<T> uv_coordinates(const ReluNet<T>& n, T eps) {
  require_relu_net(n, "uv_coordinates");
  require(eps >= T(0), "uv_coordinates", "eps must be >= 0");
  ReluCoordinates<T> c;
  c.n1 = n.W1.rowwise().norm();
  c.n2 = n.W2.colwise().norm().transpose();
  c.alpha = (c.n1.array() + eps).log().matrix();
  c.beta = (c.n2.array() + eps).log().matrix();
  c.u = c.alpha + c.beta;
  c.v = c.alpha - c.beta;
  return c;
}

// ---------------------------------------------------------------- LRM (seed 000)

/// Per-head RMS scales s_Q⁽ʰ⁾ = RMS(r_Q slice), s_K⁽ʰ⁾ = RMS(r_K slice), both [h].
template <class T>
struct HeadScales {
  Vec<T> s_q;  // [h]
  Vec<T> s_k;  // [h]
};

template <class T>
HeadScales<T> lrm_head_scales(const Vec<T>& r_q, const Vec<T>& r_k, Index n_heads) {
  require(n_heads >= 1 && r_q.size() % n_heads == 0 && r_k.size() == r_q.size(), "lrm_head_scales",
          "r_q and r_k must both be [h·dk]");
  const Index dk = r_q.size() / n_heads;
  HeadScales<T> s{Vec<T>(n_heads), Vec<T>(n_heads)};
  for (Index i = 0; i < n_heads; ++i) {
    s.s_q(i) = std::sqrt(r_q.segment(i * dk, dk).squaredNorm() / static_cast<T>(dk));
    s.s_k(i) = std::sqrt(r_k.segment(i * dk, dk).squaredNorm() / static_cast<T>(dk));
  }
  return s;
}

template <class T>
HeadScales<T> lrm_head_scales(const QkMultipliers<T>& m) {
  return lrm_head_scales(m.r_q, m.r_k, m.n_heads);
}

/// Drift statistics over heads (and layers): max and mean of |log(s_Q/s_K)| (seed 000 eq. 3 is the max).
struct DriftStats {
  double max = 0.0;
  double mean = 0.0;
};

template <class T>
DriftStats lrm_drift(const std::vector<HeadScales<T>>& layers) {
  DriftStats d;
  Index count = 0;
  for (const auto& s : layers) {
    require(s.s_q.size() == s.s_k.size(), "lrm_drift", "s_q and s_k must have one entry per head");
    for (Index i = 0; i < s.s_q.size(); ++i) {
      const double x = std::abs(std::log(static_cast<double>(s.s_q(i)) / static_cast<double>(s.s_k(i))));
      d.max = std::max(d.max, x);
      d.mean += x;
      ++count;
    }
  }
  if (count > 0) d.mean /= static_cast<double>(count);
  return d;
}

template <class T>
DriftStats lrm_drift(const HeadScales<T>& one_layer) {
  return lrm_drift(std::vector<HeadScales<T>>{one_layer});
}

// ---------------------------------------------------------------- factor pairs (seed 003)

template <class T>
struct GramImbalance {
  Mat<T> H_A;  // [r, r]  AᵀA
  Mat<T> H_B;  // [r, r]  BᵀB
  Mat<T> D;    // [r, r]  H_A − H_B
  T norm = 0;      // ‖D‖_F
  T relative = 0;  // ‖D‖_F / ‖H_A‖_F
};

template <class T>
GramImbalance<T> gram_imbalance(const FactorPair<T>& p) {
  require_factor_pair(p, "gram_imbalance");
  GramImbalance<T> g;
  g.H_A = p.A.transpose() * p.A;
  g.H_B = p.B.transpose() * p.B;
  g.D = g.H_A - g.H_B;
  g.norm = g.D.norm();
  const T ha = g.H_A.norm();
  g.relative = ha > T(0) ? g.norm / ha : g.norm;
  return g;
}

// ---------------------------------------------------------------- attention (seed 001)

/// Options for the empirical Q/K covariances of seed 001 Table 8.
struct CovarianceOptions {
  // Seed 001 calls S_Q, S_K "empirical covariances of Q and K" (App. G.4), so by default we centre
  // (subtract the mean over tokens) before forming QᵀQ/T. Q and K include their biases (the actual
  // projections); with centring the biases drop out. false: raw second moments QᵀQ/T.
  bool center = true;
};

template <class T>
struct QkCovariances {
  Mat<T> S_Q;  // [dk, dk]
  Mat<T> S_K;  // [dk, dk]
};

/// S_Q = Q̃ᵀQ̃/T and S_K = K̃ᵀK̃/T for X [T, d], with Q̃ = Q (minus its column means when centring).
template <class T>
QkCovariances<T> qk_covariances(const AttentionHead<T>& h, const Mat<T>& x, const CovarianceOptions& options = {}) {
  require_head(h, "qk_covariances");
  require(x.cols() == h.d_model() && x.rows() >= 1, "qk_covariances", "X must be [T >= 1, d_model]");
  Mat<T> q = (x * h.W_q).rowwise() + h.b_q;  // [T, dk]
  Mat<T> k = (x * h.W_k).rowwise() + h.b_k;  // [T, dk]
  if (options.center) {
    q.rowwise() -= q.colwise().mean();
    k.rowwise() -= k.colwise().mean();
  }
  const T inv_t = T(1) / static_cast<T>(x.rows());
  return {q.transpose() * q * inv_t, k.transpose() * k * inv_t};
}

/// ‖S_Q − S_K‖_F / ‖S_Q‖_F (seed 001 Table 8, "Q/K imbalance").
template <class T>
T activation_covariance_imbalance(const AttentionHead<T>& h, const Mat<T>& x, const CovarianceOptions& options = {}) {
  const QkCovariances<T> c = qk_covariances(h, x, options);
  const T sq = c.S_Q.norm();
  require(sq > T(0), "activation_covariance_imbalance", "S_Q is zero");
  return (c.S_Q - c.S_K).norm() / sq;
}

/// ‖W_vᵀW_v − I‖_F (seed 001 Table 8, "value orthonormality").
template <class T>
T value_orthonormality_error(const AttentionHead<T>& h) {
  return (h.W_v.transpose() * h.W_v - Mat<T>::Identity(h.d_v(), h.d_v())).norm();
}

// ---------------------------------------------------------------- function comparison

/// Errors between two evaluations of a function on the same inputs (rows = samples x, cols = outputs).
struct InvarianceError {
  double mean_abs = 0.0;      // Δ_inv = ⟨|f_a − f_b|⟩ over all entries (seed 004 eq. 11; m = 1 there)
  double relative_fro = 0.0;  // ‖f_a − f_b‖_F / ‖f_a‖_F (absolute ‖·‖_F when f_a = 0)
  double max_abs = 0.0;       // max |f_a − f_b|
};

/// f_a is the reference [N, m], f_b the comparison [N, m]. Differences are accumulated in double.
template <class T>
InvarianceError invariance_error(const Mat<T>& f_a, const Mat<T>& f_b) {
  require(f_a.rows() == f_b.rows() && f_a.cols() == f_b.cols() && f_a.size() > 0, "invariance_error",
          "f_a and f_b must be non-empty and of the same shape [N, m]");
  const Mat<double> a = f_a.template cast<double>();
  const Mat<double> diff = a - f_b.template cast<double>();
  InvarianceError e;
  e.mean_abs = diff.cwiseAbs().mean();
  e.max_abs = diff.cwiseAbs().maxCoeff();
  const double na = a.norm();
  e.relative_fro = na > 0.0 ? diff.norm() / na : diff.norm();
  return e;
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_COORDINATES_INSTANCES(EXTERN, T) \
  EXTERN template ReluCoordinates<T> uv_coordinates<T>(const ReluNet<T>&, T); \
  EXTERN template HeadScales<T> lrm_head_scales<T>(const Vec<T>&, const Vec<T>&, Index); \
  EXTERN template HeadScales<T> lrm_head_scales<T>(const QkMultipliers<T>&); \
  EXTERN template DriftStats lrm_drift<T>(const std::vector<HeadScales<T>>&); \
  EXTERN template DriftStats lrm_drift<T>(const HeadScales<T>&); \
  EXTERN template GramImbalance<T> gram_imbalance<T>(const FactorPair<T>&); \
  EXTERN template QkCovariances<T> qk_covariances<T>(const AttentionHead<T>&, const Mat<T>&, const CovarianceOptions&); \
  EXTERN template T activation_covariance_imbalance<T>(const AttentionHead<T>&, const Mat<T>&, const CovarianceOptions&); \
  EXTERN template T value_orthonormality_error<T>(const AttentionHead<T>&); \
  EXTERN template InvarianceError invariance_error<T>(const Mat<T>&, const Mat<T>&);
GAUGELAB_CORE_COORDINATES_INSTANCES(extern, float)
GAUGELAB_CORE_COORDINATES_INSTANCES(extern, double)

}  // namespace gaugelab::core
