// Small dense linear-algebra building blocks shared by the gauge actions and fixes.
//
// Gauge actions need S⁻¹ and S⁻ᵀ applied to a block; we solve with an LU factorisation of S instead
// of forming the inverse (one factorisation, backward-stable solves). SPD square roots go through a
// symmetric eigendecomposition. Shape checks throw std::invalid_argument with the function's name.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/types.hpp"

namespace gaugelab::core {

/// Throws std::invalid_argument "<what>: <detail>" unless ok.
inline void require(bool ok, const std::string& what, const std::string& detail) {
  if (!ok) throw std::invalid_argument(what + ": " + detail);
}

/// Throws unless S is square of size r.
template <class T>
void require_square(const Mat<T>& s, Index r, const std::string& what) {
  require(s.rows() == r && s.cols() == r, what,
          "gauge must be [" + std::to_string(r) + ", " + std::to_string(r) + "], got [" + std::to_string(s.rows()) +
              ", " + std::to_string(s.cols()) + "]");
}

/// X·S⁻¹ for X [n, r], S [r, r]:  (S⁻ᵀ Xᵀ)ᵀ.
template <class T>
Mat<T> times_inverse(const Mat<T>& x, const Mat<T>& s) {
  return s.transpose().partialPivLu().solve(x.transpose()).transpose();
}

/// X·S⁻ᵀ for X [n, r], S [r, r]:  (S⁻¹ Xᵀ)ᵀ.
template <class T>
Mat<T> times_inverse_transpose(const Mat<T>& x, const Mat<T>& s) {
  return s.partialPivLu().solve(x.transpose()).transpose();
}

/// S⁻¹·X for S [r, r], X [r, n].
template <class T>
Mat<T> inverse_times(const Mat<T>& s, const Mat<T>& x) {
  return s.partialPivLu().solve(x);
}

/// Symmetric square root P^{1/2} of an SPD matrix P [r, r] (eigenvalues clamped at 0 against round-off).
template <class T>
Mat<T> spd_sqrt(const Mat<T>& p) {
  Eigen::SelfAdjointEigenSolver<Mat<T>> es(p);
  const Vec<T> ev = es.eigenvalues().cwiseMax(T(0)).cwiseSqrt();
  return es.eigenvectors() * ev.asDiagonal() * es.eigenvectors().transpose();
}

/// P^{-1/2} of an SPD matrix P [r, r]; throws when P has a non-positive eigenvalue.
template <class T>
Mat<T> spd_inv_sqrt(const Mat<T>& p, const std::string& what) {
  Eigen::SelfAdjointEigenSolver<Mat<T>> es(p);
  require(es.eigenvalues().minCoeff() > T(0), what, "matrix is not positive definite (rank-deficient factor?)");
  const Vec<T> ev = es.eigenvalues().cwiseSqrt().cwiseInverse();
  return es.eigenvectors() * ev.asDiagonal() * es.eigenvectors().transpose();
}

/// Thin QR with positive diagonal: W [m, k] = Q [m, k] · R [k, k], QᵀQ = I, R upper triangular,
/// diag(R) > 0 (seed 001 Remark 48: flip the sign of Q[:, j] and R[j, :] where R[j, j] < 0; a zero
/// diagonal keeps sign +1). Needs m >= k.
template <class T>
struct ThinQR {
  Mat<T> q;  // [m, k]
  Mat<T> r;  // [k, k]
};

template <class T>
ThinQR<T> thin_qr_positive(const Mat<T>& w) {
  const Index m = w.rows(), k = w.cols();
  require(m >= k, "thin_qr_positive", "needs rows >= cols (full column rank, seed 001 A4)");
  Eigen::HouseholderQR<Mat<T>> qr(w);
  ThinQR<T> out;
  out.q = qr.householderQ() * Mat<T>::Identity(m, k);
  out.r = qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
  for (Index j = 0; j < k; ++j) {
    if (out.r(j, j) < T(0)) {
      out.q.col(j) = -out.q.col(j);
      out.r.row(j) = -out.r.row(j);
    }
  }
  return out;
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_LINALG_INSTANCES(EXTERN, T) \
  EXTERN template void require_square<T>(const Mat<T>&, Index, const std::string&); \
  EXTERN template Mat<T> times_inverse<T>(const Mat<T>&, const Mat<T>&); \
  EXTERN template Mat<T> times_inverse_transpose<T>(const Mat<T>&, const Mat<T>&); \
  EXTERN template Mat<T> inverse_times<T>(const Mat<T>&, const Mat<T>&); \
  EXTERN template Mat<T> spd_sqrt<T>(const Mat<T>&); \
  EXTERN template Mat<T> spd_inv_sqrt<T>(const Mat<T>&, const std::string&); \
  EXTERN template ThinQR<T> thin_qr_positive<T>(const Mat<T>&);
GAUGELAB_CORE_GAUGE_LINALG_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_LINALG_INSTANCES(extern, double)

}  // namespace gaugelab::core
