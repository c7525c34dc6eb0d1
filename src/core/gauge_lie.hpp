// The Lie-algebra view of the factor and attention-head gauges (seed 001 §3 Prop. 9, Prop. 38 and
// App. H.2 Alg. 2 / Remark 51; seed 003 §1).
//
// A gauge group acts on the parameters θ without changing the function; the derivative of the action
// at the identity maps each Lie-algebra element to a tangent of the orbit through θ (the vertical
// space). Its Euclidean orthogonal complement is the horizontal space: a gauge-invariant loss has
// horizontal gradients (Prop. 38), an optimizer's step in general does not, and at a critical point
// the Hessian vanishes on every vertical direction (Prop. 9: nullity at least the group's dimension).
//
//   factor pair (A [m, r], B [n, r]) under GL(r), (A, B) ↦ (A S, B S⁻ᵀ):
//     X ∈ gl(r) ↦ (δA, δB) = (A X, −B Xᵀ)
//   ReLU layer (relu_gauge.hpp) under the positive diagonal group (ℝ₊)^H, D = diag(e^a):
//     a ∈ ℝ^H ↦ (δW1, δb1, δW2, δb2) = (diag(a) W1, a ⊙ b1, −W2 diag(a), 0)
//   attention head under GL(d_k) × GL(d_v) (attention_head.hpp), with each bias row moving with its
//   matrix (W̃ = [W; b], [d+1, ·]):
//     (X, Y) ∈ gl(d_k) ⊕ gl(d_v) ↦ δW̃_q = W̃_q X, δW̃_k = −W̃_k Xᵀ, δW̃_v = W̃_v Y, δW_o = −Y W_o
//
// The exact horizontal projection subtracts the vertical vector nearest to G: for the Q/K (or factor)
// sector the X minimising ‖G_q − W̃_q X‖² + ‖G_k + W̃_k Xᵀ‖² solves the Sylvester equation
//     (W̃_qᵀW̃_q) X + X (W̃_kᵀW̃_k) = W̃_qᵀ G_q − G_kᵀ W̃_k                      (seed 001 Remark 51)
// and for the V/O sector (W̃_vᵀW̃_v) Y + Y (W_o W_oᵀ) = W̃_vᵀ G_v − G_o W_oᵀ. Both Grams are symmetric
// positive semi-definite, so the equation is solved in their eigenbases; where λ_i + μ_j vanishes
// (a rank-deficient factor: the action is not free there) the minimum-norm solution is taken.
// Alg. 2 (the seed's cheap approximation) is here too, so its error can be measured against it.
#pragma once

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "core/attention_head.hpp"
#include "core/factor_gauge.hpp"
#include "core/relu_gauge.hpp"

namespace gaugelab::core {

/// X [n, m] with A X + X B = C for symmetric positive semi-definite A [n, n] and B [m, m]; entries of
/// the eigenbasis where λ_i(A) + μ_j(B) <= rel_tol·(λ_max + μ_max) are set to 0 (minimum norm).
template <class T>
Mat<T> solve_sylvester_psd(const Mat<T>& a, const Mat<T>& b, const Mat<T>& c, T rel_tol = T(1e-12)) {
  require(a.rows() == a.cols() && b.rows() == b.cols() && c.rows() == a.rows() && c.cols() == b.rows(),
          "solve_sylvester_psd", "A [n, n], B [m, m] and C [n, m] expected");
  const Eigen::SelfAdjointEigenSolver<Mat<T>> ea(a), eb(b);
  require(ea.info() == Eigen::Success && eb.info() == Eigen::Success, "solve_sylvester_psd",
          "eigendecomposition failed");
  const Vec<T>& la = ea.eigenvalues();  // ascending
  const Vec<T>& lb = eb.eigenvalues();
  const T scale = la.cwiseAbs().maxCoeff() + lb.cwiseAbs().maxCoeff();
  Mat<T> ct = ea.eigenvectors().transpose() * c * eb.eigenvectors();  // C in the eigenbases
  for (Index i = 0; i < ct.rows(); ++i)
    for (Index j = 0; j < ct.cols(); ++j) {
      const T den = la(i) + lb(j);
      ct(i, j) = den > rel_tol * scale ? ct(i, j) / den : T(0);
    }
  return ea.eigenvectors() * ct * eb.eigenvectors().transpose();
}

// ----------------------------------------------------------------------------- factor gauge GL(r)

/// The orbit tangent (A X, −B Xᵀ) of X [r, r] ∈ gl(r) at the pair p.
template <class T>
FactorPair<T> factor_orbit_tangent(const FactorPair<T>& p, const Mat<T>& x) {
  require_factor_pair(p, "factor_orbit_tangent");
  require_square(x, p.rank(), "factor_orbit_tangent");
  return {p.A * x, -(p.B * x.transpose())};
}

/// The X [r, r] whose tangent is nearest to the direction g (same shapes as p): Remark 51's solve.
template <class T>
Mat<T> factor_vertical_coordinates(const FactorPair<T>& p, const FactorPair<T>& g) {
  require_factor_pair(p, "factor_vertical_coordinates");
  require(g.A.rows() == p.A.rows() && g.A.cols() == p.A.cols() && g.B.rows() == p.B.rows() && g.B.cols() == p.B.cols(),
          "factor_vertical_coordinates", "the direction must have the pair's shapes");
  return solve_sylvester_psd<T>(p.A.transpose() * p.A, p.B.transpose() * p.B,
                                p.A.transpose() * g.A - g.B.transpose() * p.B);
}

/// The horizontal part of g: g minus its nearest orbit tangent (Euclidean, exact).
template <class T>
FactorPair<T> factor_horizontal_projection(const FactorPair<T>& p, const FactorPair<T>& g) {
  const FactorPair<T> v = factor_orbit_tangent(p, factor_vertical_coordinates(p, g));
  return {g.A - v.A, g.B - v.B};
}

// ------------------------------------------------------------------------ ReLU rescaling (ℝ₊)^H

/// The orbit tangent of a [H] (the log-scales' velocity) at n: (diag(a) W1, a ⊙ b1, −W2 diag(a), 0).
/// A direction is stored as a ReluNet of n's shapes.
template <class T>
ReluNet<T> relu_orbit_tangent(const ReluNet<T>& n, const Vec<T>& a) {
  require_relu_net(n, "relu_orbit_tangent");
  require(a.size() == n.hidden(), "relu_orbit_tangent", "a must be [H]");
  return {a.asDiagonal() * n.W1, a.cwiseProduct(n.b1), -(n.W2 * a.asDiagonal()), Vec<T>::Zero(n.b2.size())};
}

/// The exact horizontal part of g: the neurons' tangents have disjoint supports, so each neuron's
/// coordinate is a_i = ⟨g, t_i⟩ / ‖t_i‖² with t_i = (row i of W1, b1_i, −column i of W2); a neuron
/// whose weights are all 0 has no orbit direction (a_i = 0).
template <class T>
ReluNet<T> relu_horizontal_projection(const ReluNet<T>& n, const ReluNet<T>& g) {
  require_relu_net(n, "relu_horizontal_projection");
  require_relu_net(g, "relu_horizontal_projection (direction)");
  require(g.W1.rows() == n.W1.rows() && g.W1.cols() == n.W1.cols() && g.W2.rows() == n.W2.rows(),
          "relu_horizontal_projection", "the direction must have the network's shapes");
  Vec<T> a(n.hidden());
  for (Index i = 0; i < n.hidden(); ++i) {
    const T num = g.W1.row(i).dot(n.W1.row(i)) + g.b1(i) * n.b1(i) - g.W2.col(i).dot(n.W2.col(i));
    const T den = n.W1.row(i).squaredNorm() + n.b1(i) * n.b1(i) + n.W2.col(i).squaredNorm();
    a(i) = den > T(0) ? num / den : T(0);
  }
  const ReluNet<T> t = relu_orbit_tangent(n, a);
  return {g.W1 - t.W1, g.b1 - t.b1, g.W2 - t.W2, g.b2};
}

/// The quantity gradient flow conserves per neuron: ‖w1_i‖² + b1_i² − ‖w2_i‖² (w2_i column i of W2),
/// since its rate along −∇L is −2⟨∇L, t_i⟩ = 0 for the neuron's orbit tangent t_i (Prop. 38); finite
/// GD steps move it by O(lr²) per step. [H]
template <class T>
Vec<T> relu_balance(const ReluNet<T>& n) {
  require_relu_net(n, "relu_balance");
  return n.W1.rowwise().squaredNorm() + n.b1.cwiseAbs2() - n.W2.colwise().squaredNorm().transpose();
}

// ------------------------------------------------------------------ attention head GL(d_k) × GL(d_v)

/// A direction in one head's parameter space, stored with the head's own shapes (δW_q, δb_q, ...).
template <class T>
using HeadDirection = AttentionHead<T>;

/// An element (X [d_k, d_k], Y [d_v, d_v]) of the head's Lie algebra gl(d_k) ⊕ gl(d_v).
template <class T>
struct HeadAlgebra {
  Mat<T> X;  // [d_k, d_k]: the Q/K sector
  Mat<T> Y;  // [d_v, d_v]: the V/O sector
};

namespace detail {

template <class T>
Mat<T> with_bias_row(const Mat<T>& w /*[d, c]*/, const RowVec<T>& b /*[c]*/) {  // [d + 1, c]
  Mat<T> out(w.rows() + 1, w.cols());
  out.topRows(w.rows()) = w;
  out.row(w.rows()) = b;
  return out;
}

template <class T>
Mat<T> pinv(const Mat<T>& m) {
  return Eigen::CompleteOrthogonalDecomposition<Mat<T>>(m).pseudoInverse();
}

}  // namespace detail

/// The orbit tangent of (X, Y) at h: the derivative of apply_head_gauge(h, exp(tX), exp(tY)) at t = 0.
template <class T>
HeadDirection<T> head_orbit_tangent(const AttentionHead<T>& h, const HeadAlgebra<T>& e) {
  require_head(h, "head_orbit_tangent");
  require_square(e.X, h.d_k(), "head_orbit_tangent");
  require_square(e.Y, h.d_v(), "head_orbit_tangent");
  HeadDirection<T> t;
  t.W_q = h.W_q * e.X;
  t.b_q = h.b_q * e.X;
  t.W_k = -(h.W_k * e.X.transpose());
  t.b_k = -(h.b_k * e.X.transpose());
  t.W_v = h.W_v * e.Y;
  t.b_v = h.b_v * e.Y;
  t.W_o = -(e.Y * h.W_o);
  return t;
}

/// The Euclidean inner product of two directions (every block, biases included).
template <class T>
T head_inner(const HeadDirection<T>& a, const HeadDirection<T>& b) {
  return (a.W_q.array() * b.W_q.array()).sum() + (a.W_k.array() * b.W_k.array()).sum() +
         (a.W_v.array() * b.W_v.array()).sum() + (a.W_o.array() * b.W_o.array()).sum() + a.b_q.dot(b.b_q) +
         a.b_k.dot(b.b_k) + a.b_v.dot(b.b_v);
}

/// a − b, block by block.
template <class T>
HeadDirection<T> head_difference(const HeadDirection<T>& a, const HeadDirection<T>& b) {
  HeadDirection<T> d;
  d.W_q = a.W_q - b.W_q, d.W_k = a.W_k - b.W_k, d.W_v = a.W_v - b.W_v, d.W_o = a.W_o - b.W_o;
  d.b_q = a.b_q - b.b_q, d.b_k = a.b_k - b.b_k, d.b_v = a.b_v - b.b_v;
  return d;
}

/// The (X, Y) whose orbit tangent is nearest to g: one Sylvester solve per sector (Remark 51).
template <class T>
HeadAlgebra<T> head_vertical_coordinates(const AttentionHead<T>& h, const HeadDirection<T>& g) {
  require_head(h, "head_vertical_coordinates");
  require_head(g, "head_vertical_coordinates (direction)");
  require(g.W_q.rows() == h.W_q.rows() && g.W_q.cols() == h.W_q.cols() && g.W_v.cols() == h.W_v.cols(),
          "head_vertical_coordinates", "the direction must have the head's shapes");
  using detail::with_bias_row;
  const Mat<T> q = with_bias_row(h.W_q, h.b_q), k = with_bias_row(h.W_k, h.b_k), v = with_bias_row(h.W_v, h.b_v);
  const Mat<T> gq = with_bias_row(g.W_q, g.b_q), gk = with_bias_row(g.W_k, g.b_k), gv = with_bias_row(g.W_v, g.b_v);
  HeadAlgebra<T> e;
  e.X = solve_sylvester_psd<T>(q.transpose() * q, k.transpose() * k, q.transpose() * gq - gk.transpose() * k);
  e.Y = solve_sylvester_psd<T>(v.transpose() * v, h.W_o * h.W_o.transpose(), v.transpose() * gv - g.W_o * h.W_o.transpose());
  return e;
}

/// The exact horizontal part of g (Remark 51): orthogonal to every orbit tangent at h.
template <class T>
HeadDirection<T> head_horizontal_projection(const AttentionHead<T>& h, const HeadDirection<T>& g) {
  return head_difference(g, head_orbit_tangent(h, head_vertical_coordinates(h, g)));
}

/// Alg. 2 of seed 001 (App. H.2), the approximate projection: per sector the two least-squares
/// estimates of the algebra element, X = W̃_q⁺G_q and Xᵀ = −W̃_k⁺G_k, averaged (Y likewise from
/// W̃_v⁺G_v and −G_o W_o⁺), then subtracted. Exact when g is vertical; in general not orthogonal.
template <class T>
HeadDirection<T> head_horizontal_projection_approx(const AttentionHead<T>& h, const HeadDirection<T>& g) {
  require_head(h, "head_horizontal_projection_approx");
  using detail::pinv;
  using detail::with_bias_row;
  const Mat<T> q = with_bias_row(h.W_q, h.b_q), k = with_bias_row(h.W_k, h.b_k), v = with_bias_row(h.W_v, h.b_v);
  const Mat<T> gq = with_bias_row(g.W_q, g.b_q), gk = with_bias_row(g.W_k, g.b_k), gv = with_bias_row(g.W_v, g.b_v);
  HeadAlgebra<T> e;
  e.X = T(0.5) * (pinv(q) * gq - (pinv(k) * gk).transpose());
  e.Y = T(0.5) * (pinv(v) * gv - g.W_o * pinv(Mat<T>(h.W_o)));
  return head_difference(g, head_orbit_tangent(h, e));
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_LIE_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> solve_sylvester_psd<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, T); \
  EXTERN template FactorPair<T> factor_orbit_tangent<T>(const FactorPair<T>&, const Mat<T>&); \
  EXTERN template Mat<T> factor_vertical_coordinates<T>(const FactorPair<T>&, const FactorPair<T>&); \
  EXTERN template FactorPair<T> factor_horizontal_projection<T>(const FactorPair<T>&, const FactorPair<T>&); \
  EXTERN template ReluNet<T> relu_orbit_tangent<T>(const ReluNet<T>&, const Vec<T>&); \
  EXTERN template ReluNet<T> relu_horizontal_projection<T>(const ReluNet<T>&, const ReluNet<T>&); \
  EXTERN template Vec<T> relu_balance<T>(const ReluNet<T>&); \
  EXTERN template Mat<T> detail::with_bias_row<T>(const Mat<T>&, const RowVec<T>&); \
  EXTERN template Mat<T> detail::pinv<T>(const Mat<T>&); \
  EXTERN template HeadDirection<T> head_orbit_tangent<T>(const AttentionHead<T>&, const HeadAlgebra<T>&); \
  EXTERN template T head_inner<T>(const HeadDirection<T>&, const HeadDirection<T>&); \
  EXTERN template HeadDirection<T> head_difference<T>(const HeadDirection<T>&, const HeadDirection<T>&); \
  EXTERN template HeadAlgebra<T> head_vertical_coordinates<T>(const AttentionHead<T>&, const HeadDirection<T>&); \
  EXTERN template HeadDirection<T> head_horizontal_projection<T>(const AttentionHead<T>&, const HeadDirection<T>&); \
  EXTERN template HeadDirection<T> head_horizontal_projection_approx<T>(const AttentionHead<T>&, const HeadDirection<T>&);
GAUGELAB_CORE_GAUGE_LIE_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_LIE_INSTANCES(extern, double)

}  // namespace gaugelab::core
