// The shape every update rule's output takes, the per-matrix optimizer state, and applying a step.
//
// Every rule in the core is written as a decoupled-weight-decay step (seed 003 §4, "Shrink-plus-
// Increment"):  W ← ρ·W + U,  ρ = 1 − η·λ.  The rule returns the raw increment U and the shrink ρ
// separately, so a quotient wrapper (quotient.hpp) can act on U alone; Hyperball additionally
// retracts onto the Frobenius sphere of radius R (seed 003 §5) after the shrink-plus-increment.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/types.hpp"

namespace gaugelab::core {

/// One proposed step for a matrix parameter W [m, n]: W ← ρ·W + U, then (if radius > 0) W ← R·W/‖W‖_F.
template <class T>
struct Step {
  Mat<T> U;      // [m, n] raw increment (already multiplied by the learning rate and the sign)
  T rho = T(1);  // shrink ρ ∈ (0, 1]; 1 − η·λ for decoupled weight decay, 1 without decay
  T radius = T(0);  // > 0: Hyperball retraction onto ‖W‖_F = radius after the shrink-plus-increment
};

/// Optimizer state of one matrix parameter, shared by all rules (each rule uses the fields it needs;
/// an empty matrix means "not yet initialised"). Optimizer-state transport (transport.hpp) acts on
/// `moment1` (first moments: momentum buffer, Adam m, Muon buffer) and `moment2` (Adam v).
template <class T>
struct RuleState {
  Mat<T> moment1;      // [m, n] first moment / momentum buffer (empty until the first step)
  Mat<T> moment2;      // [m, n] elementwise second moment (AdamW only; empty otherwise)
  long long step = 0;  // number of steps taken (AdamW bias correction counts from 1)
  double radius = 0;   // Hyperball radius R once fixed (0: not yet fixed)
  Mat<T> basis;        // LoRA-RITE (update_factor_literature.hpp): the partner factor's previous orthonormal basis;
                       // there moment2 is its r×r second moment
};

/// Decoupled weight-decay shrink ρ = 1 − η·λ (torch.optim.AdamW, KellerJordan Muon). Throws when the
/// product leaves (0, 1]: ρ ≤ 0 would flip or erase the weights, ρ > 1 is weight growth, not decay.
inline double decay_factor(double lr, double weight_decay) {
  const double rho = 1.0 - lr * weight_decay;
  if (!(rho > 0.0 && rho <= 1.0))
    throw std::invalid_argument("decoupled weight decay: 1 - lr*weight_decay = " + std::to_string(rho) +
                                " is outside (0, 1]; need 0 <= lr*weight_decay < 1");
  return rho;
}

/// Shrink-plus-increment ρ·W + U (seed 003 §4): the decoupled weight-decay step of one factor.
template <class T>
Mat<T> shrink_plus_increment(const Mat<T>& W /*[m, n]*/, T rho, const Mat<T>& U /*[m, n]*/) {
  if (W.rows() != U.rows() || W.cols() != U.cols())
    throw std::invalid_argument("shrink_plus_increment: W is " + std::to_string(W.rows()) + "x" +
                                std::to_string(W.cols()) + " but U is " + std::to_string(U.rows()) + "x" +
                                std::to_string(U.cols()));
  return rho * W + U;
}

/// Applies a step in place: W ← ρ·W + U, then the Hyperball retraction W ← R·W/‖W‖_F if radius > 0.
template <class T>
void apply_step(Mat<T>& W /*[m, n]*/, const Step<T>& s) {
  W = shrink_plus_increment(W, s.rho, s.U);
  if (s.radius > T(0)) {
    const T norm = W.norm();
    if (!(norm > T(0)) || !std::isfinite(static_cast<double>(norm)))
      throw std::domain_error("Hyperball retraction: ||W + U||_F is " + std::to_string(static_cast<double>(norm)) +
                              "; cannot project onto the sphere");
    W *= s.radius / norm;
  }
}

namespace update_detail {

template <class T>
void require_same_shape(const Mat<T>& W, const Mat<T>& G, const char* who) {
  if (W.rows() != G.rows() || W.cols() != G.cols() || W.size() == 0)
    throw std::invalid_argument(std::string(who) + ": W is " + std::to_string(W.rows()) + "x" +
                                std::to_string(W.cols()) + " and G is " + std::to_string(G.rows()) + "x" +
                                std::to_string(G.cols()) + "; need equal, non-empty shapes");
}

/// A state slot that is either empty (fresh) or shaped like W.
template <class T>
void require_slot(const Mat<T>& slot, const Mat<T>& W, const char* who, const char* name) {
  if (slot.size() != 0 && (slot.rows() != W.rows() || slot.cols() != W.cols()))
    throw std::invalid_argument(std::string(who) + ": state " + name + " is " + std::to_string(slot.rows()) + "x" +
                                std::to_string(slot.cols()) + " but W is " + std::to_string(W.rows()) + "x" +
                                std::to_string(W.cols()));
}

inline void require_nonneg(double v, const char* who, const char* name) {
  if (!(v >= 0.0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(who) + ": " + name + " must be finite and >= 0, got " + std::to_string(v));
}

inline void require_unit_interval(double v, const char* who, const char* name) {
  if (!(v >= 0.0 && v < 1.0))
    throw std::invalid_argument(std::string(who) + ": " + name + " must be in [0, 1), got " + std::to_string(v));
}

}  // namespace update_detail

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_STEP_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> shrink_plus_increment<T>(const Mat<T>&, T, const Mat<T>&); \
  EXTERN template void apply_step<T>(Mat<T>&, const Step<T>&); \
  EXTERN template void update_detail::require_same_shape<T>(const Mat<T>&, const Mat<T>&, const char*); \
  EXTERN template void update_detail::require_slot<T>(const Mat<T>&, const Mat<T>&, const char*, const char*);
GAUGELAB_CORE_UPDATE_STEP_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_STEP_INSTANCES(extern, double)

}  // namespace gaugelab::core
