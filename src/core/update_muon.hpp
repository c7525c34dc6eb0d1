// Muon (seed 003 §6) exactly as KellerJordan/Muon, for one matrix W [rows, cols]:
//
//   buf ← β·buf + (1 − β)·G                 (torch: buf.lerp_(grad, 1 − β); fresh buf = 0)
//   g   = β·buf + (1 − β)·G  if Nesterov     (torch: grad.lerp_(buf, β)), else g = buf
//   O   = NS5(g)  (or the exact polar factor UVᵀ of g, by SVD, when orthogonaliser = polar_svd)
//   W ← (1 − ηλ)·W − η·√max(1, rows/cols)·O
//
// NS5 (zeropower_via_newtonschulz5): X = g/(‖g‖_F + 1e-7), transposed first when rows > cols so the
// Gram X·Xᵀ is the small one, then 5 times  A = XXᵀ, B = bA + c·A·A, X = aX + BX  with
// (a, b, c) = (3.4445, −4.7750, 2.0315). On singular values this is the scalar quintic
// p(x) = ax + bx³ + cx⁵ applied `steps` times to x = σᵢ/(‖g‖_F + 1e-7) (newton_schulz_scalar); the
// singular vectors are those of g. Computed with that scalar map (by the tests): for every
// x ≥ 2e-3, p⁵(x) ∈ [0.6818, 1.2024] ⊂ [0.5, 1.21]; for x ≥ 1e-2, p⁵(x) ∈ [0.6818, 1.1344]; below
// x ≈ 1.07e-3 the output drops under 0.5 (p⁵(x) ≈ 3.4445⁵·x ≈ 484x near 0). For a g with k =
// min(rows, cols) and condition number κ, x ≥ 1/(κ√k), so κ√k ≤ 500 guarantees the [0.5, 1.21] band.
//
// Precision: KellerJordan runs NS5 in bfloat16. With `bf16 = true` every torch operation's result is
// rounded to bf16 (input cast, norm, normalisation, each product and sum of the iteration, the
// final scaling); products accumulate in T before rounding, as GPU bf16 matmuls accumulate in fp32.
// The default (false) runs in T so double-precision tests see the exact iteration.
//
// Gauge behaviour (seed 003 §6): O(GQ) = O(G)·Q for orthogonal Q (NS5 and the polar factor are
// orthogonally equivariant on both sides), but not under anisotropic scalings or shears.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "core/update_bf16.hpp"
#include "core/update_step.hpp"

namespace gaugelab::core {

enum class Orthogonaliser {
  newton_schulz,  // KellerJordan NS5 quintic iteration (approximate polar factor, singular values ≈ 0.68..1.2)
  polar_svd,      // exact polar factor U·Vᵀ of the thin SVD (singular values exactly 1 on the range)
};

/// Parses "newton_schulz|ns5|polar|polar_svd"; throws std::invalid_argument naming the value.
inline Orthogonaliser parse_orthogonaliser(std::string_view s) {
  if (s == "newton_schulz" || s == "ns5") return Orthogonaliser::newton_schulz;
  if (s == "polar" || s == "polar_svd") return Orthogonaliser::polar_svd;
  throw std::invalid_argument("unknown orthogonaliser '" + std::string(s) + "' (expected newton_schulz|polar_svd)");
}

struct NewtonSchulzOptions {
  int steps = 5;         // iterations (KellerJordan ns_steps = 5)
  double a = 3.4445;     // quintic coefficients of KellerJordan/Muon
  double b = -4.7750;
  double c = 2.0315;
  double eps = 1e-7;     // X = G/(‖G‖_F + eps)
  bool bf16 = false;     // true: emulate the bf16 arithmetic of the GPU implementation (see header)
};

/// p^steps(x) with p(x) = ax + bx³ + cx⁵: what NS5 does to one normalised singular value x.
inline double newton_schulz_scalar(double x, const NewtonSchulzOptions& o = {}) {
  for (int k = 0; k < o.steps; ++k) {
    const double x2 = x * x;
    x = o.a * x + o.b * x2 * x + o.c * x2 * x2 * x;
  }
  return x;
}

/// NS5 orthogonalisation of G [rows, cols] (zeropower_via_newtonschulz5); returns [rows, cols].
template <class T>
Mat<T> newton_schulz(const Mat<T>& G /*[rows, cols]*/, const NewtonSchulzOptions& o = {}) {
  if (o.steps < 0) throw std::invalid_argument("newton_schulz: steps must be >= 0");
  if (G.size() == 0) throw std::invalid_argument("newton_schulz: empty matrix");
  const bool bf = o.bf16;
  const auto rnd = [bf](const Mat<T>& m) { return bf ? round_to_bf16(m) : m; };
  const auto rnd_s = [bf](double v) { return bf ? round_to_bf16(v) : v; };
  const bool tall = G.rows() > G.cols();
  Mat<T> X = rnd(G);  // torch: G.bfloat16()
  if (tall) X.transposeInPlace();  // [k, l] with k = min(rows, cols) <= l
  const double denom = rnd_s(rnd_s(static_cast<double>(X.norm())) + o.eps);
  X = rnd(Mat<T>(X / static_cast<T>(denom)));
  const T a = static_cast<T>(o.a), b = static_cast<T>(o.b), c = static_cast<T>(o.c);
  for (int k = 0; k < o.steps; ++k) {
    const Mat<T> A = rnd(Mat<T>(X * X.transpose()));                                 // [k, k]
    const Mat<T> B = rnd(Mat<T>(rnd(Mat<T>(b * A)) + rnd(Mat<T>(rnd(Mat<T>(c * A)) * A))));  // [k, k]
    X = rnd(Mat<T>(rnd(Mat<T>(a * X)) + rnd(Mat<T>(B * X))));                        // [k, l]
  }
  if (tall) X.transposeInPlace();
  return X;
}

/// Exact polar factor of G [rows, cols]: U·Vᵀ from the thin SVD G = UΣVᵀ. Singular directions with
/// σ ≤ max(rows, cols)·ε_T·σ_max are dropped (mapped to 0, as NS5 maps 0 to 0), so a rank-deficient
/// G gives the partial isometry on its range rather than an arbitrary completion; G = 0 gives 0.
template <class T>
Mat<T> polar_factor(const Mat<T>& G /*[rows, cols]*/) {
  if (G.size() == 0) throw std::invalid_argument("polar_factor: empty matrix");
  Eigen::BDCSVD<Mat<T>> svd(G, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const Vec<T>& s = svd.singularValues();
  const T smax = s.size() ? s(0) : T(0);
  const T tol = static_cast<T>(std::max(G.rows(), G.cols())) * std::numeric_limits<T>::epsilon() * smax;
  Vec<T> keep(s.size());
  for (Index i = 0; i < s.size(); ++i) keep(i) = (s(i) > tol && s(i) > T(0)) ? T(1) : T(0);
  return svd.matrixU() * keep.asDiagonal() * svd.matrixV().transpose();
}

struct MuonOptions {
  double lr = 0.02;           // η (KellerJordan default)
  double momentum = 0.95;     // β (KellerJordan default)
  bool nesterov = true;       // KellerJordan muon_update default
  double weight_decay = 0.0;  // λ, decoupled: W ← (1 − ηλ)·W before the update (KellerJordan default 0)
  Orthogonaliser orthogonaliser = Orthogonaliser::newton_schulz;  // or the exact polar factor
  NewtonSchulzOptions ns{};   // coefficients, steps, eps and bf16 emulation of NS5
};

/// One Muon step; moment1 is the momentum buffer (zeros when fresh, as in KellerJordan/Muon).
template <class T>
Step<T> muon_step(const MuonOptions& o, const Mat<T>& W /*[rows, cols]*/, const Mat<T>& G /*[rows, cols]*/,
                  RuleState<T>& st) {
  update_detail::require_same_shape(W, G, "muon");
  update_detail::require_slot(st.moment1, W, "muon", "moment1");
  update_detail::require_nonneg(o.lr, "muon", "lr");
  update_detail::require_unit_interval(o.momentum, "muon", "momentum");
  update_detail::require_nonneg(o.weight_decay, "muon", "weight_decay");
  if (st.moment1.size() == 0) st.moment1 = Mat<T>::Zero(W.rows(), W.cols());
  const T beta = static_cast<T>(o.momentum);
  st.moment1 = beta * st.moment1 + (T(1) - beta) * G;  // buf.lerp_(grad, 1 − β)
  ++st.step;
  const Mat<T> g = o.nesterov ? Mat<T>((T(1) - beta) * G + beta * st.moment1) : st.moment1;  // grad.lerp_(buf, β)
  Mat<T> O = o.orthogonaliser == Orthogonaliser::newton_schulz ? newton_schulz(g, o.ns) : polar_factor(g);
  const double scale = std::sqrt(std::max(1.0, static_cast<double>(W.rows()) / static_cast<double>(W.cols())));
  O *= static_cast<T>(scale);
  if (o.orthogonaliser == Orthogonaliser::newton_schulz && o.ns.bf16) O = round_to_bf16(O);  // update *= scale in bf16
  return {static_cast<T>(-o.lr) * O, static_cast<T>(decay_factor(o.lr, o.weight_decay)), T(0)};
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_MUON_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> newton_schulz<T>(const Mat<T>&, const NewtonSchulzOptions&); \
  EXTERN template Mat<T> polar_factor<T>(const Mat<T>&); \
  EXTERN template Step<T> muon_step<T>(const MuonOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&);
GAUGELAB_CORE_UPDATE_MUON_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_MUON_INSTANCES(extern, double)

}  // namespace gaugelab::core
