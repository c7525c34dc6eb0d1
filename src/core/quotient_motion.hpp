// Represented motion of a factor step and the Gram dynamics of decoupled weight decay.
//
// For M = ABᵀ with A [m, r], B [n, r] and increments U_A [m, r], U_B [n, r]:
//   first order  ΔM = U_A·Bᵀ + A·U_Bᵀ                                   (seed 003 §3)
//   exact        ΔM = (ρ_A·A + U_A)(ρ_B·B + U_B)ᵀ − ABᵀ                  (seed 003 §4 with shrink)
//   Gram         H_A,after = ρ_A²H_A + ρ_A(AᵀU_A + U_AᵀA) + U_AᵀU_A      (seed 003 §4, "Full Gram Evolution")
// For the value–output path M_VO = W_V·W_O use A = W_V, B = W_Oᵀ (and U_B = U_Oᵀ).
#pragma once

#include <stdexcept>
#include <string>

#include "core/types.hpp"

namespace gaugelab::core {

/// Increments of a factor pair (raw or quotient-corrected).
template <class T>
struct PairIncrement {
  Mat<T> U_A;  // [m, r]
  Mat<T> U_B;  // [n, r]
};

namespace quotient_detail {

template <class T>
void require_pair_shapes(const Mat<T>& A, const Mat<T>& B, const Mat<T>& U_A, const Mat<T>& U_B, const char* who) {
  if (A.cols() != B.cols() || U_A.rows() != A.rows() || U_A.cols() != A.cols() || U_B.rows() != B.rows() ||
      U_B.cols() != B.cols())
    throw std::invalid_argument(std::string(who) + ": shapes A " + std::to_string(A.rows()) + "x" +
                                std::to_string(A.cols()) + ", B " + std::to_string(B.rows()) + "x" +
                                std::to_string(B.cols()) + ", U_A " + std::to_string(U_A.rows()) + "x" +
                                std::to_string(U_A.cols()) + ", U_B " + std::to_string(U_B.rows()) + "x" +
                                std::to_string(U_B.cols()) + " do not form a factor pair with its increments");
}

}  // namespace quotient_detail

/// First-order represented motion ΔM = U_A·Bᵀ + A·U_Bᵀ [m, n].
template <class T>
Mat<T> first_order_motion(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& U_A /*[m, r]*/,
                          const Mat<T>& U_B /*[n, r]*/) {
  quotient_detail::require_pair_shapes(A, B, U_A, U_B, "first_order_motion");
  return U_A * B.transpose() + A * U_B.transpose();
}

/// Exact post-step motion (ρ_A·A + U_A)(ρ_B·B + U_B)ᵀ − ABᵀ [m, n].
template <class T>
Mat<T> exact_motion(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& U_A /*[m, r]*/,
                    const Mat<T>& U_B /*[n, r]*/, T rho_A = T(1), T rho_B = T(1)) {
  quotient_detail::require_pair_shapes(A, B, U_A, U_B, "exact_motion");
  return (rho_A * A + U_A) * (rho_B * B + U_B).transpose() - A * B.transpose();
}

/// Gram of one factor after A ← ρ·A + U: ρ²AᵀA + ρ(AᵀU + UᵀA) + UᵀU [r, r] (seed 003 §4).
template <class T>
Mat<T> gram_after_step(const Mat<T>& A /*[m, r]*/, const Mat<T>& U /*[m, r]*/, T rho) {
  if (A.rows() != U.rows() || A.cols() != U.cols())
    throw std::invalid_argument("gram_after_step: A and U must have the same shape");
  const Mat<T> cross = A.transpose() * U;  // [r, r]
  return rho * rho * (A.transpose() * A) + rho * (cross + cross.transpose()) + U.transpose() * U;
}

// Compiled once for float and double in core/quotient_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_QUOTIENT_MOTION_INSTANCES(EXTERN, T) \
  EXTERN template void quotient_detail::require_pair_shapes<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, const char*); \
  EXTERN template Mat<T> first_order_motion<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&); \
  EXTERN template Mat<T> exact_motion<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, T, T); \
  EXTERN template Mat<T> gram_after_step<T>(const Mat<T>&, const Mat<T>&, T);
GAUGELAB_CORE_QUOTIENT_MOTION_INSTANCES(extern, float)
GAUGELAB_CORE_QUOTIENT_MOTION_INSTANCES(extern, double)

}  // namespace gaugelab::core
