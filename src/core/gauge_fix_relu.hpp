// Gauge fixing for the ReLU neuron-rescaling gauge (seed 004 §III–IV, App. A).
//
// Group removed: the positive diagonal group (ℝ₊)^H of eq. (3), one scale per hidden neuron.
//   * Soft fixing (eq. 9/16): the penalty G(θ) = (1/H) Σᵢ vᵢ² is added to the loss with weight λ; it
//     acts only on the gauge coordinate vᵢ = log(n₁ᵢ+ε) − log(n₂ᵢ+ε), so the orbit representative it
//     prefers is the balanced one, and along the gauge-only flow vᵢ decays at rate κᵢ (eq. 21).
//   * Hard fixing: the explicit rescaling sᵢ* = √((n₂ᵢ+ε)/(n₁ᵢ+ε)) jumps to that representative.
//     Why this one: it equalises incoming and outgoing norms (n₁ᵢ' = n₂ᵢ' = √(n₁ᵢn₂ᵢ) for ε = 0,
//     G = 0), the point of each orbit where neither layer carries the neuron's scale.
// Norms follow eq. (7): n₁ᵢ = ‖W₁[i, :]‖ (bias b₁ not included), n₂ᵢ = ‖W₂[:, i]‖.
#pragma once

#include <cmath>

#include "core/coordinates.hpp"
#include "core/relu_gauge.hpp"

namespace gaugelab::core {

/// G(θ) = (1/H) Σᵢ vᵢ² (seed 004 eq. 9 / A4).
template <class T>
T soft_gauge_penalty(const ReluNet<T>& n, T eps) {
  const ReluCoordinates<T> c = uv_coordinates(n, eps);
  return c.v.squaredNorm() / static_cast<T>(n.hidden());
}

/// ∂G/∂W1 [H, d] and ∂G/∂W2 [m, H]; G does not depend on b1, b2.
template <class T>
struct SoftPenaltyGradient {
  Mat<T> dW1;  // [H, d]
  Mat<T> dW2;  // [m, H]
};

/// Analytic gradient, seed 004 eqs. (A11)–(A12):
///   ∇_{wᵢ} G = (2/H) vᵢ wᵢ / (n₁ᵢ(n₁ᵢ+ε)),   ∇_{aᵢ} G = −(2/H) vᵢ aᵢ / (n₂ᵢ(n₂ᵢ+ε)),
/// with wᵢ = W1[i, :], aᵢ = W2[:, i]. A zero block has no gradient of its norm; we return 0 there.
template <class T>
SoftPenaltyGradient<T> soft_gauge_penalty_gradient(const ReluNet<T>& n, T eps) {
  const ReluCoordinates<T> c = uv_coordinates(n, eps);
  const T two_over_h = T(2) / static_cast<T>(n.hidden());
  SoftPenaltyGradient<T> g{Mat<T>::Zero(n.W1.rows(), n.W1.cols()), Mat<T>::Zero(n.W2.rows(), n.W2.cols())};
  for (Index i = 0; i < n.hidden(); ++i) {
    if (c.n1(i) > T(0)) g.dW1.row(i) = two_over_h * c.v(i) / (c.n1(i) * (c.n1(i) + eps)) * n.W1.row(i);
    if (c.n2(i) > T(0)) g.dW2.col(i) = -two_over_h * c.v(i) / (c.n2(i) * (c.n2(i) + eps)) * n.W2.col(i);
  }
  return g;
}

/// Damping rates κᵢ = (2λ/H)[(n₁ᵢ+ε)⁻² + (n₂ᵢ+ε)⁻²] [H] (seed 004 eq. 21 / A21): under the
/// gauge-only flow θ̇ = −λ∇G one has v̇ᵢ = −κᵢ vᵢ exactly (eq. A20).
template <class T>
Vec<T> relaxation_rates(const ReluNet<T>& n, T lambda, T eps) {
  const ReluCoordinates<T> c = uv_coordinates(n, eps);
  const T pre = T(2) * lambda / static_cast<T>(n.hidden());
  return (pre * ((c.n1.array() + eps).square().inverse() + (c.n2.array() + eps).square().inverse())).matrix();
}

/// The gauge coordinate's velocity split as in seed 004 eq. (20), at one point and one parameter
/// velocity θ̇ = −g (g: the gradient of the whole loss L_task + λG, shaped like the net):
///   v̇ᵢ = −∇vᵢ·g = −(F₁ᵢ − F₂ᵢ) − κᵢvᵢ,
/// where the penalty's share is exactly −κᵢvᵢ (∇vᵢ·λ∇G = (2λ/H)vᵢ‖∇vᵢ‖², ‖∇vᵢ‖² = (n₁ᵢ+ε)⁻² + (n₂ᵢ+ε)⁻²)
/// and the rest, F₁ᵢ − F₂ᵢ = ∇vᵢ·g − κᵢvᵢ, is the task's forcing (eq. 19). b₁ is not in n₁ (eq. 7), so
/// ∇vᵢ has no b₁ part. All members [H].
template <class T>
struct GaugeCoordinateRates {
  Vec<T> v;        // vᵢ = log(n₁ᵢ+ε) − log(n₂ᵢ+ε)
  Vec<T> kappa;    // κᵢ (relaxation_rates)
  Vec<T> dv_dt;    // v̇ᵢ = −∇vᵢ·g
  Vec<T> forcing;  // F₁ᵢ − F₂ᵢ = ∇vᵢ·g − κᵢvᵢ
};

/// `grad` holds ∂L/∂W1 [H, d], ∂L/∂b1, ∂L/∂W2 [m, H], ∂L/∂b2 in a net's shapes. A zero block has no
/// gradient of its norm (its ∇vᵢ part is taken as 0, as in soft_gauge_penalty_gradient).
template <class T>
GaugeCoordinateRates<T> gauge_coordinate_rates(const ReluNet<T>& n, const ReluNet<T>& grad, T lambda, T eps) {
  require_relu_net(n, "gauge_coordinate_rates");
  require(grad.W1.rows() == n.W1.rows() && grad.W1.cols() == n.W1.cols() && grad.W2.rows() == n.W2.rows() &&
              grad.W2.cols() == n.W2.cols(),
          "gauge_coordinate_rates", "grad must have the net's shapes");
  const ReluCoordinates<T> c = uv_coordinates(n, eps);
  GaugeCoordinateRates<T> r{c.v, relaxation_rates(n, lambda, eps), Vec<T>(n.hidden()), Vec<T>(n.hidden())};
  for (Index i = 0; i < n.hidden(); ++i) {
    T dv_dot_g = T(0);  // ∇vᵢ·g
    if (c.n1(i) > T(0)) dv_dot_g += n.W1.row(i).dot(grad.W1.row(i)) / (c.n1(i) * (c.n1(i) + eps));
    if (c.n2(i) > T(0)) dv_dot_g -= n.W2.col(i).dot(grad.W2.col(i)) / (c.n2(i) * (c.n2(i) + eps));
    r.dv_dt(i) = -dv_dot_g;
    r.forcing(i) = dv_dot_g - r.kappa(i) * c.v(i);
  }
  return r;
}

template <class T>
struct BalanceResult {
  ReluNet<T> net;  // the balanced representative
  Vec<T> s;        // [H] the rescaling applied (eq. 3)
};

/// Hard balance (seed 004 §III): sᵢ* = √((n₂ᵢ+ε)/(n₁ᵢ+ε)), applied with eq. (3). For ε = 0 this
/// gives vᵢ = 0 exactly; for ε > 0 it minimises G along the orbit up to O(ε). (The exact minimiser is
/// √(n₂ᵢ/n₁ᵢ) for every ε, since it makes n₁ᵢ' = n₂ᵢ'; we follow the seed's ε-guarded formula, whose
/// residual is |vᵢ| ≤ ε·|1/n₁ᵢ − 1/n₂ᵢ|, checked in tests/core/test_fix_relu.cpp.) A neuron whose
/// n₁ᵢ+ε or n₂ᵢ+ε is zero has a degenerate orbit (no balanced point) and is left as is (sᵢ = 1).
template <class T>
BalanceResult<T> balance_neurons(const ReluNet<T>& n, T eps) {
  const ReluCoordinates<T> c = uv_coordinates(n, eps);
  Vec<T> s(n.hidden());
  for (Index i = 0; i < n.hidden(); ++i) {
    const T num = c.n2(i) + eps, den = c.n1(i) + eps;
    s(i) = (num > T(0) && den > T(0)) ? std::sqrt(num / den) : T(1);
  }
  return {rescale_neurons(n, s), s};
}

// Compiled once for float and double in core/gauge_fix_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_FIX_RELU_INSTANCES(EXTERN, T) \
  EXTERN template T soft_gauge_penalty<T>(const ReluNet<T>&, T); \
  EXTERN template SoftPenaltyGradient<T> soft_gauge_penalty_gradient<T>(const ReluNet<T>&, T); \
  EXTERN template Vec<T> relaxation_rates<T>(const ReluNet<T>&, T, T); \
  EXTERN template GaugeCoordinateRates<T> gauge_coordinate_rates<T>(const ReluNet<T>&, const ReluNet<T>&, T, T); \
  EXTERN template BalanceResult<T> balance_neurons<T>(const ReluNet<T>&, T);
GAUGELAB_CORE_GAUGE_FIX_RELU_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_FIX_RELU_INSTANCES(extern, double)

}  // namespace gaugelab::core
