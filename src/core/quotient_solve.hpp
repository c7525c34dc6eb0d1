// Right solves with a damped Gram, X = U·(FᵀF + λI)⁻¹, for the opposite-Gram correction
// (seed 003 §3): never an explicit inverse.
//
//   cholesky  form H = FᵀF + λI [r, r], factor H = LLᵀ, solve H·Xᵀ = Uᵀ. Cheapest (r×r work after
//             one p×r×r product). Forming FᵀF squares the condition number: the relative error is
//             ~ ε_T·κ(F)², and once κ(F)² ≳ 1/ε_T (κ ≳ 4e3 in float, 7e7 in double, λ = 0) H is
//             numerically singular and the factorisation fails (reported, not silently wrong).
//   qr        Householder QR of the stacked [F; √λ·I] = QR, so FᵀF + λI = RᵀR without forming FᵀF,
//             then two triangular solves Rᵀ·Y = Uᵀ, R·Xᵀ = Y. Backward stable in F: the error is
//             ~ ε_T·κ(F) in the directions that dominate, so it is the more accurate choice for
//             ill-conditioned (strongly imbalanced) factors, at about twice the cost. The tests
//             check that it beats cholesky on float factors with κ(F) = 1e3.
//
// The diagonal approximation (seed 003 §7) replaces FᵀF by its diagonal: X = U·diag(‖F₍:,j₎‖² + λ)⁻¹.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/types.hpp"

namespace gaugelab::core {

enum class GramSolve { cholesky, qr };

/// Parses "cholesky|qr"; throws std::invalid_argument naming the value.
inline GramSolve parse_gram_solve(std::string_view s) {
  if (s == "cholesky") return GramSolve::cholesky;
  if (s == "qr") return GramSolve::qr;
  throw std::invalid_argument("unknown Gram solve '" + std::string(s) + "' (expected cholesky|qr)");
}

namespace quotient_detail {

template <class T>
void require_solve_shapes(const Mat<T>& U, const Mat<T>& F, double damping, const char* who) {
  if (U.cols() != F.cols() || F.cols() == 0)
    throw std::invalid_argument(std::string(who) + ": U has " + std::to_string(U.cols()) + " columns but F has " +
                                std::to_string(F.cols()) + "; need the same inner dimension r >= 1");
  if (!(damping >= 0.0) || !std::isfinite(damping))
    throw std::invalid_argument(std::string(who) + ": damping must be finite and >= 0");
}

}  // namespace quotient_detail

/// X = U·(FᵀF + λI)⁻¹ for U [k, r], F [p, r]; returns [k, r].
template <class T>
Mat<T> right_gram_solve(const Mat<T>& U /*[k, r]*/, const Mat<T>& F /*[p, r]*/, double damping,
                        GramSolve solve = GramSolve::cholesky) {
  quotient_detail::require_solve_shapes(U, F, damping, "right_gram_solve");
  const Index r = F.cols();
  if (solve == GramSolve::cholesky) {
    Mat<T> H = F.transpose() * F;  // [r, r]
    H.diagonal().array() += static_cast<T>(damping);
    Eigen::LLT<Mat<T>> llt(H);
    if (llt.info() != Eigen::Success)
      throw std::domain_error("right_gram_solve: F^T F + lambda I is not numerically positive definite "
                              "(rank-deficient or too ill-conditioned factor); use damping > 0 or the qr solve");
    return llt.solve(U.transpose()).transpose();
  }
  const Index p = F.rows();
  const bool damped = damping > 0.0;
  Mat<T> stacked(p + (damped ? r : 0), r);  // [p (+ r), r] = [F; √λ·I]
  stacked.topRows(p) = F;
  if (damped) stacked.bottomRows(r) = static_cast<T>(std::sqrt(damping)) * Mat<T>::Identity(r, r);
  if (stacked.rows() < r)
    throw std::domain_error("right_gram_solve: F has fewer rows than columns and no damping; F^T F is singular");
  Eigen::HouseholderQR<Mat<T>> qr(stacked);
  const Mat<T> R = qr.matrixQR().topRows(r).template triangularView<Eigen::Upper>();  // [r, r]
  for (Index i = 0; i < r; ++i)
    if (!(R(i, i) != T(0)))
      throw std::domain_error("right_gram_solve: QR factor of F is singular (rank-deficient factor); use damping > 0");
  const Mat<T> Y = R.transpose().template triangularView<Eigen::Lower>().solve(U.transpose());  // [r, k]
  return R.template triangularView<Eigen::Upper>().solve(Y).transpose();
}

/// X = U·diag(FᵀF + λI)⁻¹: the diagonal approximation (column j divided by ‖F₍:,j₎‖² + λ).
template <class T>
Mat<T> right_diag_gram_solve(const Mat<T>& U /*[k, r]*/, const Mat<T>& F /*[p, r]*/, double damping) {
  quotient_detail::require_solve_shapes(U, F, damping, "right_diag_gram_solve");
  Vec<T> d = F.colwise().squaredNorm().transpose();  // [r]
  d.array() += static_cast<T>(damping);
  for (Index j = 0; j < d.size(); ++j)
    if (!(d(j) > T(0)))
      throw std::domain_error("right_diag_gram_solve: column " + std::to_string(j) +
                              " of the opposite factor is zero and damping is 0");
  return U * d.cwiseInverse().asDiagonal();
}

// Compiled once for float and double in core/quotient_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_QUOTIENT_SOLVE_INSTANCES(EXTERN, T) \
  EXTERN template void quotient_detail::require_solve_shapes<T>(const Mat<T>&, const Mat<T>&, double, const char*); \
  EXTERN template Mat<T> right_gram_solve<T>(const Mat<T>&, const Mat<T>&, double, GramSolve); \
  EXTERN template Mat<T> right_diag_gram_solve<T>(const Mat<T>&, const Mat<T>&, double);
GAUGELAB_CORE_QUOTIENT_SOLVE_INSTANCES(extern, float)
GAUGELAB_CORE_QUOTIENT_SOLVE_INSTANCES(extern, double)

}  // namespace gaugelab::core
