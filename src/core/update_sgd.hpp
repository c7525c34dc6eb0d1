// SGD and SGD with momentum (heavy-ball or Nesterov) as raw-increment rules for one matrix W [m, n].
//
// Momentum follows torch.optim.SGD: the first step sets buf = G, later steps buf ← μ·buf + (1−d)·G;
// heavy-ball uses g = buf, Nesterov g = G + μ·buf; U = −η·g. Weight decay is decoupled here
// (ρ = 1 − η·λ, seed 003 §4) rather than torch.optim.SGD's coupled G + λW, so every rule in the
// core has the same shrink-plus-increment shape and the quotient wrappers see the pure increment.
//
// Gauge behaviour (seed 003 §6): U = −ηG is equivariant under orthogonal coordinate changes only;
// the momentum buffer is a sum of past gradients, so it moves like a covector under a gauge move
// (see transport.hpp).
#pragma once

#include "core/update_step.hpp"

namespace gaugelab::core {

struct SgdOptions {
  double lr = 1e-2;           // η
  double weight_decay = 0.0;  // λ, decoupled: W ← (1 − ηλ)·W + U
};

struct MomentumOptions {
  double lr = 1e-2;           // η
  double momentum = 0.9;      // μ ∈ [0, 1)
  double dampening = 0.0;     // d ∈ [0, 1): buf ← μ·buf + (1 − d)·G after the first step (torch)
  bool nesterov = false;      // false: heavy-ball g = buf; true: Nesterov g = G + μ·buf
  double weight_decay = 0.0;  // λ, decoupled
};

/// Plain gradient descent: U = −η·G, ρ = 1 − ηλ. State is only counted.
template <class T>
Step<T> sgd_step(const SgdOptions& o, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/, RuleState<T>& st) {
  update_detail::require_same_shape(W, G, "sgd");
  update_detail::require_nonneg(o.lr, "sgd", "lr");
  update_detail::require_nonneg(o.weight_decay, "sgd", "weight_decay");
  ++st.step;
  return {static_cast<T>(-o.lr) * G, static_cast<T>(decay_factor(o.lr, o.weight_decay)), T(0)};
}

/// SGD with momentum (torch.optim.SGD semantics, decoupled weight decay); moment1 is the buffer.
template <class T>
Step<T> momentum_step(const MomentumOptions& o, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/,
                      RuleState<T>& st) {
  update_detail::require_same_shape(W, G, "momentum");
  update_detail::require_slot(st.moment1, W, "momentum", "moment1");
  update_detail::require_nonneg(o.lr, "momentum", "lr");
  update_detail::require_unit_interval(o.momentum, "momentum", "momentum");
  update_detail::require_unit_interval(o.dampening, "momentum", "dampening");
  update_detail::require_nonneg(o.weight_decay, "momentum", "weight_decay");
  const T mu = static_cast<T>(o.momentum);
  if (st.moment1.size() == 0)
    st.moment1 = G;  // torch: the first step initialises the buffer with the gradient itself
  else
    st.moment1 = mu * st.moment1 + static_cast<T>(1.0 - o.dampening) * G;
  ++st.step;
  const Mat<T> g = o.nesterov ? Mat<T>(G + mu * st.moment1) : st.moment1;
  return {static_cast<T>(-o.lr) * g, static_cast<T>(decay_factor(o.lr, o.weight_decay)), T(0)};
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_SGD_INSTANCES(EXTERN, T) \
  EXTERN template Step<T> sgd_step<T>(const SgdOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&); \
  EXTERN template Step<T> momentum_step<T>(const MomentumOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&);
GAUGELAB_CORE_UPDATE_SGD_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_SGD_INSTANCES(extern, double)

}  // namespace gaugelab::core
