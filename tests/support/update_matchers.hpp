// Reusable checks for update rules and quotient wrappers (seed 003 §3, §4, §6, §8).
//
// Every matcher returns UpdateMatch{ok, worst, msg} instead of asserting, so a test can assert that a
// wrong case FAILS (e.g. plain factor GD is not quotient-compatible) as well as that a right one passes.
// `worst` is the largest relative error seen (or the largest band violation), `msg` says where.
//
// Gauge samplers here are local stand-ins (U·diag(σ)·Vᵀ with log σ spread evenly so cond = κ, and
// Haar orthogonal by sign-fixed QR) so these tests depend on nothing but the update/quotient headers.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/quotient.hpp"
#include "core/update_step.hpp"
#include "core/random.hpp"
#include "core/types.hpp"

namespace gaugelab::test::update {

using core::Index;
using core::Mat;
using core::PairIncrement;
using core::Rng;
using core::Vec;

struct UpdateMatch {
  bool ok = true;
  double worst = 0.0;  // largest relative error (or band violation) over all cases
  std::string msg;     // where the worst case happened
};

/// ‖x − ref‖_F / ‖ref‖_F in double (‖ref‖ = 0 compares absolutely).
template <class T>
double rel_diff(const Mat<T>& x, const Mat<T>& ref) {
  const Mat<double> xd = x.template cast<double>(), rd = ref.template cast<double>();
  const double den = rd.norm();
  return den > 0.0 ? (xd - rd).norm() / den : (xd - rd).norm();
}

/// [rows, cols] with i.i.d. N(0, stddev²), drawn in double and cast.
template <class T>
Mat<T> gaussian(Rng& rng, Index rows, Index cols, double stddev = 1.0) {
  return core::randn<double>(rng, rows, cols, stddev).template cast<T>();
}

/// Haar orthogonal [r, r] (QR of a Gaussian with the sign fix).
template <class T>
Mat<T> sample_orthogonal(Rng& rng, Index r) {
  const Mat<double> g = core::randn<double>(rng, r, r);
  Eigen::HouseholderQR<Mat<double>> qr(g);
  Mat<double> q = qr.householderQ() * Mat<double>::Identity(r, r);
  for (Index j = 0; j < r; ++j)
    if (qr.matrixQR()(j, j) < 0.0) q.col(j) = -q.col(j);
  return q.template cast<T>();
}

/// General gauge [r, r] = U·diag(σ)·Vᵀ, log σ evenly spaced over [−½ log κ, ½ log κ] (cond = κ).
template <class T>
Mat<T> sample_gl(Rng& rng, Index r, double kappa) {
  Vec<double> sigma(r);
  const double half = 0.5 * std::log(kappa);
  for (Index i = 0; i < r; ++i) sigma(i) = r == 1 ? 1.0 : std::exp(-half + 2.0 * half * double(i) / double(r - 1));
  const Mat<double> s = sample_orthogonal<double>(rng, r) * sigma.asDiagonal() * sample_orthogonal<double>(rng, r).transpose();
  return s.template cast<T>();
}

/// Positive diagonal gauge [r, r], entries exp(U(−a, a)).
template <class T>
Mat<T> sample_diagonal(Rng& rng, Index r, double log_spread) {
  Vec<double> s(r);
  for (Index i = 0; i < r; ++i) s(i) = std::exp(core::uniform(rng, -log_spread, log_spread));
  return Mat<double>(s.asDiagonal()).template cast<T>();
}

/// (AS, BS⁻ᵀ) for a gauge S [r, r].
template <class T>
std::pair<Mat<T>, Mat<T>> gauge_pair(const Mat<T>& A, const Mat<T>& B, const Mat<T>& S) {
  Eigen::PartialPivLU<Mat<T>> lu(S);
  return {A * S, lu.solve(B.transpose()).transpose()};
}

/// Gradients of the M-loss ℓ(ABᵀ) = ½‖ABᵀ − M*‖_F²: G_A = (ABᵀ − M*)B, G_B = (ABᵀ − M*)ᵀA (seed 003 §3).
template <class T>
PairIncrement<T> mloss_gradients(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& Mstar /*[m, n]*/) {
  const Mat<T> R = A * B.transpose() - Mstar;  // [m, n]
  return {R * B, R.transpose() * A};
}

namespace detail {
inline void record(UpdateMatch& r, double err, double tol, const std::string& where) {
  if (err > r.worst || !std::isfinite(err)) {
    r.worst = std::isfinite(err) ? err : std::numeric_limits<double>::infinity();
    std::ostringstream s;
    s << where << ": relative error " << err << " (tolerance " << tol << ")";
    r.msg = s.str();
  }
  if (!(err <= tol)) r.ok = false;
}
}  // namespace detail

/// Quotient compatibility (seed 003 §3, "Compatible Increment"): for every gauge S,
/// U_A(AS, BS⁻ᵀ) = U_A(A, B)·S and U_B(AS, BS⁻ᵀ) = U_B(A, B)·S⁻ᵀ, relative to the right-hand side.
/// `update(A', B')` returns PairIncrement<T>.
template <class T, class Update>
UpdateMatch expect_quotient_compatible(Update&& update, const Mat<T>& A, const Mat<T>& B,
                                       const std::vector<Mat<T>>& gauges, double tol) {
  UpdateMatch res;
  const PairIncrement<T> u0 = update(A, B);
  for (std::size_t i = 0; i < gauges.size(); ++i) {
    const Mat<T>& S = gauges[i];
    const auto [As, Bs] = gauge_pair(A, B, S);
    const PairIncrement<T> us = update(As, Bs);
    const Mat<T> want_a = u0.U_A * S;
    const Mat<T> want_b = Eigen::PartialPivLU<Mat<T>>(S).solve(u0.U_B.transpose()).transpose();  // U_B·S⁻ᵀ
    detail::record(res, std::max(rel_diff(us.U_A, want_a), rel_diff(us.U_B, want_b)), tol, "gauge " + std::to_string(i));
  }
  return res;
}

/// Represented-motion invariance (seed 003 §8): ‖ΔM(S) − ΔM(I)‖/‖ΔM(I)‖ over the gauges, with
/// ΔM(S) = U_A(S)·(BS⁻ᵀ)ᵀ + AS·U_B(S)ᵀ the first-order motion from the representative (AS, BS⁻ᵀ).
template <class T, class Update>
UpdateMatch expect_motion_invariant(Update&& update, const Mat<T>& A, const Mat<T>& B,
                                    const std::vector<Mat<T>>& gauges, double tol) {
  UpdateMatch res;
  const PairIncrement<T> u0 = update(A, B);
  const Mat<T> dm0 = core::first_order_motion(A, B, u0.U_A, u0.U_B);
  for (std::size_t i = 0; i < gauges.size(); ++i) {
    const auto [As, Bs] = gauge_pair(A, B, gauges[i]);
    const PairIncrement<T> us = update(As, Bs);
    detail::record(res, rel_diff(core::first_order_motion(As, Bs, us.U_A, us.U_B), dm0), tol, "gauge " + std::to_string(i));
  }
  return res;
}

/// Shared shrink (seed 003 §4): with ρ_A = ρ_B = ρ and no increment, D_after = ρ²·D where
/// D = AᵀA − BᵀB; relative to ‖ρ²D‖.
template <class T>
UpdateMatch expect_shared_shrink(const Mat<T>& A, const Mat<T>& B, T rho, double tol) {
  UpdateMatch res;
  const Mat<T> D = A.transpose() * A - B.transpose() * B;
  const Mat<T> A1 = core::shrink_plus_increment(A, rho, Mat<T>(Mat<T>::Zero(A.rows(), A.cols())));
  const Mat<T> B1 = core::shrink_plus_increment(B, rho, Mat<T>(Mat<T>::Zero(B.rows(), B.cols())));
  const Mat<T> D1 = A1.transpose() * A1 - B1.transpose() * B1;
  detail::record(res, rel_diff(D1, Mat<T>(rho * rho * D)), tol, "D_after vs rho^2 D");
  return res;
}

/// Singular values of X inside [lo, hi]; worst = largest distance outside the band (0 if inside).
template <class T>
UpdateMatch expect_singular_values_in(const Mat<T>& X, double lo, double hi) {
  UpdateMatch res;
  const Vec<double> s = Eigen::JacobiSVD<Mat<double>>(X.template cast<double>()).singularValues();
  for (Index i = 0; i < s.size(); ++i) {
    const double out = std::max(lo - s(i), s(i) - hi);
    if (out > 0.0) {
      res.ok = false;
      if (out > res.worst) {
        res.worst = out;
        std::ostringstream m;
        m << "singular value " << s(i) << " outside [" << lo << ", " << hi << "]";
        res.msg = m.str();
      }
    }
  }
  return res;
}

}  // namespace gaugelab::test::update
