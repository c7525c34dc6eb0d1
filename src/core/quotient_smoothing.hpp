// Random gauge smoothing (seed 003 §7, "Random Gauge Smoothing"): compute the raw increments at N
// gauge-transformed representatives (AS_i, BS_i⁻ᵀ), pull each back to the original coordinates and
// average:
//   Û_A = (1/N)·Σ U_A(AS_i, BS_i⁻ᵀ)·S_i⁻¹,   Û_B = (1/N)·Σ U_B(AS_i, BS_i⁻ᵀ)·S_iᵀ.
// Over a compact group (orthogonal S_i) this averages toward equivariance; plain GD is already
// orthogonally equivariant, so orthogonal smoothing returns the GD increment unchanged. GL(r) is not
// compact: no finite invariant distribution covers its anisotropic scalings and shears, and the
// smoothed represented motion stays representative-dependent (the tests check both). Seed 003
// recommends it as a diagnostic rather than a fix.
#pragma once

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/quotient_motion.hpp"

namespace gaugelab::core {

/// Smoothed increments. `raw(A', B')` returns the PairIncrement<T> of the rule at the representative
/// (A' [m, r], B' [n, r]); every gauge S_i is [r, r] and invertible (checked by an LU condition estimate).
template <class T, class RawIncrement>
PairIncrement<T> smooth_over_gauges(RawIncrement&& raw, const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/,
                                    const std::vector<Mat<T>>& gauges /*each [r, r]*/) {
  if (gauges.empty()) throw std::invalid_argument("smooth_over_gauges: need at least one gauge");
  if (A.cols() != B.cols()) throw std::invalid_argument("smooth_over_gauges: A and B must share r");
  const Index r = A.cols();
  PairIncrement<T> acc{Mat<T>::Zero(A.rows(), r), Mat<T>::Zero(B.rows(), r)};
  for (std::size_t i = 0; i < gauges.size(); ++i) {
    const Mat<T>& S = gauges[i];
    if (S.rows() != r || S.cols() != r)
      throw std::invalid_argument("smooth_over_gauges: gauge " + std::to_string(i) + " is not " + std::to_string(r) +
                                  "x" + std::to_string(r));
    Eigen::PartialPivLU<Mat<T>> lu(S);
    if (!(lu.rcond() > std::numeric_limits<T>::epsilon()))
      throw std::invalid_argument("smooth_over_gauges: gauge " + std::to_string(i) + " is singular to working precision");
    const Mat<T> As = A * S;                                      // [m, r]
    const Mat<T> Bs = lu.solve(B.transpose()).transpose();        // B·S⁻ᵀ [n, r]
    const PairIncrement<T> u = raw(As, Bs);
    const Eigen::PartialPivLU<Mat<T>> lu_t(S.transpose());
    quotient_detail::require_pair_shapes(As, Bs, u.U_A, u.U_B, "smooth_over_gauges (raw increment)");
    acc.U_A += lu_t.solve(u.U_A.transpose()).transpose();  // U_A·S⁻¹ (Sᵀ·X = U_Aᵀ)
    acc.U_B += u.U_B * S.transpose();                                 // U_B·Sᵀ
  }
  const T inv_n = T(1) / static_cast<T>(gauges.size());
  acc.U_A *= inv_n;
  acc.U_B *= inv_n;
  return acc;
}

}  // namespace gaugelab::core
