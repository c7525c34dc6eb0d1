// AdamW as a raw-increment rule for one matrix W [m, n], following torch.optim.AdamW:
//
//   W ← (1 − ηλ)·W                                  (decoupled decay: the shrink ρ, seed 003 §4)
//   m ← β₁·m + (1 − β₁)·G,   v ← β₂·v + (1 − β₂)·G⊙G  (fresh state: m = v = 0)
//   U = −(η / (1 − β₁ᵗ)) · m ⊘ (√v / √(1 − β₂ᵗ) + ε)     (bias correction; without it: −η·m ⊘ (√v + ε))
//
// The step returns U and ρ separately (W_next = ρW + U, identical to torch's in-place order because
// U does not depend on W). Gauge behaviour (seed 003 §6): with ε → 0 the increment is invariant to a
// coordinatewise rescaling of the gradient, but it is not equivariant under a general factor gauge.
// ε = 0 is allowed (the tests use it to expose the exact invariance); a zero gradient entry on the
// first step then gives 0/0 = NaN, exactly as in torch.
#pragma once

#include <cmath>

#include "core/update_step.hpp"

namespace gaugelab::core {

struct AdamWOptions {
  double lr = 1e-3;             // η (torch default)
  double beta1 = 0.9;           // β₁ (torch default)
  double beta2 = 0.999;         // β₂ (torch default; the GPT-2 tier uses 0.95)
  double eps = 1e-8;            // ε added to the bias-corrected √v (torch default)
  double weight_decay = 1e-2;   // λ, decoupled (torch default)
  bool bias_correction = true;  // divide m by 1 − β₁ᵗ and v by 1 − β₂ᵗ (torch always does)
};

/// One AdamW step; moment1 = m, moment2 = v, step = t (incremented before use, so t = 1 first).
template <class T>
Step<T> adamw_step(const AdamWOptions& o, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/, RuleState<T>& st) {
  update_detail::require_same_shape(W, G, "adamw");
  update_detail::require_slot(st.moment1, W, "adamw", "moment1");
  update_detail::require_slot(st.moment2, W, "adamw", "moment2");
  update_detail::require_nonneg(o.lr, "adamw", "lr");
  update_detail::require_unit_interval(o.beta1, "adamw", "beta1");
  update_detail::require_unit_interval(o.beta2, "adamw", "beta2");
  update_detail::require_nonneg(o.eps, "adamw", "eps");
  update_detail::require_nonneg(o.weight_decay, "adamw", "weight_decay");
  if (st.moment1.size() == 0) st.moment1 = Mat<T>::Zero(W.rows(), W.cols());
  if (st.moment2.size() == 0) st.moment2 = Mat<T>::Zero(W.rows(), W.cols());
  ++st.step;
  const T b1 = static_cast<T>(o.beta1), b2 = static_cast<T>(o.beta2);
  st.moment1 = b1 * st.moment1 + (T(1) - b1) * G;
  st.moment2 = b2 * st.moment2 + (T(1) - b2) * G.cwiseProduct(G);
  double step_size = o.lr, bc2_sqrt = 1.0;
  if (o.bias_correction) {
    const double t = static_cast<double>(st.step);
    step_size = o.lr / (1.0 - std::pow(o.beta1, t));
    bc2_sqrt = std::sqrt(1.0 - std::pow(o.beta2, t));
  }
  const Mat<T> denom =
      (st.moment2.array().sqrt() / static_cast<T>(bc2_sqrt) + static_cast<T>(o.eps)).matrix();  // [m, n]
  Mat<T> U = static_cast<T>(-step_size) * st.moment1.cwiseQuotient(denom);
  return {std::move(U), static_cast<T>(decay_factor(o.lr, o.weight_decay)), T(0)};
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_ADAMW_INSTANCES(EXTERN, T) \
  EXTERN template Step<T> adamw_step<T>(const AdamWOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&);
GAUGELAB_CORE_UPDATE_ADAMW_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_ADAMW_INSTANCES(extern, double)

}  // namespace gaugelab::core
