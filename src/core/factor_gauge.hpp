// The factor gauge (seed 003 §1 "Factor Gauge", DESIGN §3): a pair (A, B) represents M = A·Bᵀ and
// (A, B) ~ (A·S, B·S⁻ᵀ) for every S ∈ GL(r), because (A S)(B S⁻ᵀ)ᵀ = A S S⁻¹ Bᵀ = A Bᵀ.
#pragma once

#include "core/gauge_linalg.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// A factor pair; the represented object is M = A·Bᵀ [m, n].
template <class T>
struct FactorPair {
  Mat<T> A;  // [m, r]
  Mat<T> B;  // [n, r]

  Index rank() const { return A.cols(); }
};

/// Throws unless A and B share the inner dimension r.
template <class T>
void require_factor_pair(const FactorPair<T>& p, const std::string& what) {
  require(p.A.cols() == p.B.cols(), what,
          "A [m, r] and B [n, r] must share r (got " + std::to_string(p.A.cols()) + " and " + std::to_string(p.B.cols()) +
              ")");
}

/// M = A·Bᵀ [m, n].
template <class T>
Mat<T> represented(const FactorPair<T>& p) {
  require_factor_pair(p, "represented");
  return p.A * p.B.transpose();
}

/// (A, B) ↦ (A·S, B·S⁻ᵀ), S [r, r] invertible. S⁻ᵀ is applied by an LU solve, never formed.
template <class T>
FactorPair<T> apply_gauge(const FactorPair<T>& p, const Mat<T>& s) {
  require_factor_pair(p, "apply_gauge");
  require_square(s, p.rank(), "apply_gauge");
  return {p.A * s, times_inverse_transpose(p.B, s)};
}

/// The inverse action (A, B) ↦ (A·S⁻¹, B·Sᵀ): apply_gauge_inverse(apply_gauge(p, S), S) == p.
template <class T>
FactorPair<T> apply_gauge_inverse(const FactorPair<T>& p, const Mat<T>& s) {
  require_factor_pair(p, "apply_gauge_inverse");
  require_square(s, p.rank(), "apply_gauge_inverse");
  return {times_inverse(p.A, s), p.B * s.transpose()};
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_FACTOR_GAUGE_INSTANCES(EXTERN, T) \
  EXTERN template void require_factor_pair<T>(const FactorPair<T>&, const std::string&); \
  EXTERN template Mat<T> represented<T>(const FactorPair<T>&); \
  EXTERN template FactorPair<T> apply_gauge<T>(const FactorPair<T>&, const Mat<T>&); \
  EXTERN template FactorPair<T> apply_gauge_inverse<T>(const FactorPair<T>&, const Mat<T>&);
GAUGELAB_CORE_FACTOR_GAUGE_INSTANCES(extern, float)
GAUGELAB_CORE_FACTOR_GAUGE_INSTANCES(extern, double)

}  // namespace gaugelab::core
