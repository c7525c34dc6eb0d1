// Hyperball: hard radial control on the Frobenius sphere S_R = {W : ‖W‖_F = R} (seed 003 §5).
//
//   U = −η·R·Ũ/‖Ũ‖_F,   W ← R·(W + U)/‖W + U‖_F          ("Sphere Retraction")
//
// Ũ is the proposed update direction (gradient-like sign). Here it comes from a base rule: Ũ is the
// negated increment of SGD / momentum / AdamW / Muon (default SGD, Ũ = G), so the base rule's
// learning rate only sets a scale that the normalisation removes, and its weight decay is ignored:
// on the sphere decay is normal to the constraint, P_T(λW) = 0 (seed 003 §5,
// "Decay Vanishes in the Tangent Space"). R defaults to ‖W₀‖_F, fixed at the first call (kept in
// RuleState::radius). If Ũ = 0 the increment is 0 and the step only re-projects W.
// Fixing R fixes radial scale only, not the factor gauge (seed 003 §5, "Radial Control Is Not
// Factor Balance").
#pragma once

#include <cmath>
#include <stdexcept>

#include "core/update_base_rules.hpp"

namespace gaugelab::core {

struct HyperballOptions {
  double lr = 1e-2;                      // η: the step moves ‖U‖_F = η·R before the retraction
  double radius = 0.0;                   // R > 0 fixes the sphere; 0: R = ‖W₀‖_F at the first call
  BaseRuleOptions inner = SgdOptions{};  // rule that proposes the direction Ũ (its lr and decay are ignored)
};

/// U = −η·R·Ũ/‖Ũ‖_F for a proposed direction Ũ [m, n] (0 when Ũ = 0).
template <class T>
Mat<T> hyperball_increment(const Mat<T>& direction /*[m, n]*/, T lr, T radius) {
  const T n = direction.norm();
  if (!(n > T(0))) return Mat<T>::Zero(direction.rows(), direction.cols());
  return (-lr * radius / n) * direction;
}

/// R·(W + U)/‖W + U‖_F: the retraction back onto the sphere of radius R.
template <class T>
Mat<T> hyperball_retract(const Mat<T>& W /*[m, n]*/, const Mat<T>& U /*[m, n]*/, T radius) {
  Mat<T> out = W;
  apply_step(out, Step<T>{U, T(1), radius});
  return out;
}

/// Tangent projection at W: P_T(G) = G − (⟨G, W⟩_F/‖W‖_F²)·W (seed 003 §5).
template <class T>
Mat<T> sphere_tangent_projection(const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/) {
  const T w2 = W.squaredNorm();
  if (!(w2 > T(0))) throw std::invalid_argument("sphere_tangent_projection: W = 0 has no tangent space");
  return G - ((G.cwiseProduct(W)).sum() / w2) * W;
}

/// One Hyperball step: Step{U, ρ = 1, radius = R}; apply_step then performs the retraction.
template <class T>
Step<T> hyperball_step(const HyperballOptions& o, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/,
                       RuleState<T>& st) {
  update_detail::require_same_shape(W, G, "hyperball");
  update_detail::require_nonneg(o.lr, "hyperball", "lr");
  update_detail::require_nonneg(o.radius, "hyperball", "radius");
  if (!(st.radius > 0.0)) {
    st.radius = o.radius > 0.0 ? o.radius : static_cast<double>(W.norm());
    if (!(st.radius > 0.0) || !std::isfinite(st.radius))
      throw std::invalid_argument("hyperball: radius from ||W0||_F is not positive and finite; set radius explicitly");
  }
  const Step<T> inner = propose_base(o.inner, W, G, st);
  const Mat<T> direction = -inner.U;  // Ũ: gradient-like sign
  const T R = static_cast<T>(st.radius);
  return {hyperball_increment(direction, static_cast<T>(o.lr), R), T(1), R};
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_HYPERBALL_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> hyperball_increment<T>(const Mat<T>&, T, T); \
  EXTERN template Mat<T> hyperball_retract<T>(const Mat<T>&, const Mat<T>&, T); \
  EXTERN template Mat<T> sphere_tangent_projection<T>(const Mat<T>&, const Mat<T>&); \
  EXTERN template Step<T> hyperball_step<T>(const HyperballOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&);
GAUGELAB_CORE_UPDATE_HYPERBALL_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_HYPERBALL_INSTANCES(extern, double)

}  // namespace gaugelab::core
