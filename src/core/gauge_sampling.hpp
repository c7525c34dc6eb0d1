// Seeded random gauge draws: the families the tests, the toys and the one-step harness sample from.
//
// Every draw is computed in double from the project's portable generator and then cast to T, so a
// float run and a double run with the same seed see the same gauge (up to the cast).
//
//   random_orthogonal      Haar-distributed O(r)                 (orthogonal family)
//   random_gl              U·diag(σ)·Vᵀ with cond = κ exactly    (general family, seed 003 §7 / DESIGN tier 2)
//   random_positive_diagonal  s_i = exp(U(−a, a))                (ReLU / LRM diagonal family, seed 004 §III)
//   near_orthogonal        Q·(I + δG)                            (seed 001 App. G.1 "valid transforms")
//   random_permutation     uniform S_h                           (see core/permutation.hpp)
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/permutation.hpp"
#include "core/random.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// Haar-distributed orthogonal matrix [r, r]: QR of a Gaussian matrix with the sign fix
/// Q ← Q·diag(sign(diag R)), which makes the distribution exactly Haar (without the fix, Householder
/// QR's sign convention biases it).
template <class T>
Mat<T> random_orthogonal(Rng& rng, Index r) {
  if (r < 1) throw std::invalid_argument("random_orthogonal: r must be >= 1");
  const Mat<double> g = randn<double>(rng, r, r);  // [r, r]
  Eigen::HouseholderQR<Mat<double>> qr(g);
  Mat<double> q = qr.householderQ() * Mat<double>::Identity(r, r);  // [r, r]
  const Mat<double>& packed = qr.matrixQR();                        // R on and above the diagonal
  for (Index j = 0; j < r; ++j)
    if (packed(j, j) < 0.0) q.col(j) = -q.col(j);
  return q.template cast<T>();
}

/// The spectrum of the κ-draws below, [r]: log σ evenly spaced over [−½ log κ, +½ log κ], endpoints
/// included (so σ_max/σ_min = κ and ∏σ = 1: the draw changes shape, not overall scale). For r = 1 no
/// condition number other than 1 exists; σ is then drawn log-uniform on the same range, so the
/// family still contains non-trivial scalings.
inline Vec<double> kappa_spectrum(Rng& rng, Index r, double kappa, const char* what) {
  if (r < 1) throw std::invalid_argument(std::string(what) + ": r must be >= 1");
  if (!(kappa >= 1.0) || !std::isfinite(kappa))
    throw std::invalid_argument(std::string(what) + ": kappa must be finite and >= 1");
  const double half = 0.5 * std::log(kappa);
  Vec<double> sigma(r);
  if (r == 1) {
    sigma(0) = std::exp(uniform(rng, -half, half));
  } else {
    for (Index i = 0; i < r; ++i)
      sigma(i) = std::exp(-half + 2.0 * half * static_cast<double>(i) / static_cast<double>(r - 1));
  }
  return sigma;
}

/// General linear gauge [r, r] with condition number exactly κ: S = U·diag(σ)·Vᵀ with U, V
/// independent Haar orthogonal and σ = kappa_spectrum (det S = ±1).
template <class T>
Mat<T> random_gl(Rng& rng, Index r, double kappa) {
  const Vec<double> sigma = kappa_spectrum(rng, r, kappa, "random_gl");
  const Mat<double> u = random_orthogonal<double>(rng, r);  // [r, r]
  const Mat<double> v = random_orthogonal<double>(rng, r);  // [r, r]
  const Mat<double> s = u * sigma.asDiagonal() * v.transpose();
  return s.template cast<T>();
}

/// Diagonal gauge [r, r] with condition number exactly κ: kappa_spectrum's entries in random order
/// (a Fisher–Yates shuffle with the portable generator) — the anisotropic scalings of the diagonal
/// group, at the same κ as random_gl's general draw.
template <class T>
Mat<T> random_diagonal_kappa(Rng& rng, Index r, double kappa) {
  Vec<double> sigma = kappa_spectrum(rng, r, kappa, "random_diagonal_kappa");
  for (Index i = r; i > 1; --i)
    std::swap(sigma(i - 1), sigma(static_cast<Index>(uniform01(rng) * static_cast<double>(i))));
  return sigma.asDiagonal().toDenseMatrix().template cast<T>();
}

/// Positive diagonal gauge as a vector [r]: s_i = exp(U(−a, a)) with a = log_spread >= 0, i.e.
/// log-uniform factors in [e^−a, e^a] (seed 004 eq. 3 needs s_i > 0; the spread is our choice).
template <class T>
Vec<T> random_positive_diagonal(Rng& rng, Index r, double log_spread) {
  if (r < 1) throw std::invalid_argument("random_positive_diagonal: r must be >= 1");
  if (!(log_spread >= 0.0) || !std::isfinite(log_spread))
    throw std::invalid_argument("random_positive_diagonal: log_spread must be finite and >= 0");
  Vec<T> s(r);
  for (Index i = 0; i < r; ++i) s(i) = static_cast<T>(std::exp(uniform(rng, -log_spread, log_spread)));
  return s;
}

/// Near-orthogonal gauge [r, r] = Q·(I + δ·G), Q Haar orthogonal, G with i.i.d. N(0, 1/r) entries.
/// Seed 001 (App. G.1) builds its valid transforms as "small perturbations of random orthogonal
/// matrices" without giving the scale; we normalise G by 1/√r so ‖G‖₂ ≈ 2 for every r and δ reads as
/// a relative perturbation: for δ < ½ the draw is invertible with cond ≲ (1 + 2δ)/(1 − 2δ).
template <class T>
Mat<T> near_orthogonal(Rng& rng, Index r, double perturbation) {
  if (r < 1) throw std::invalid_argument("near_orthogonal: r must be >= 1");
  if (!(perturbation >= 0.0) || !std::isfinite(perturbation))
    throw std::invalid_argument("near_orthogonal: perturbation must be finite and >= 0");
  const Mat<double> q = random_orthogonal<double>(rng, r);                                       // [r, r]
  const Mat<double> g = randn<double>(rng, r, r, 1.0 / std::sqrt(static_cast<double>(r)));  // [r, r]
  const Mat<double> s = q * (Mat<double>::Identity(r, r) + perturbation * g);
  return s.template cast<T>();
}

}  // namespace gaugelab::core
