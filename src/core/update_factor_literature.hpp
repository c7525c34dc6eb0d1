// Three quotient-aware factor updates from the literature, written from their sources' reference code, each with the
// invariance its source states (tested in tests/core/test_update_literature.cpp). Convention throughout: a factor
// pair A [m, r], B [n, r] represents M = A·Bᵀ; the gauge acts as (A S, B S⁻ᵀ), gradients as (∇_A S⁻ᵀ, ∇_B S);
// increments U are what is added to the factors (U = −lr·step).
//
// LoRA-RITE (Yen et al., "LoRA Done RITE: Robust Invariant Transformation Equilibration for LoRA Optimization",
// ICLR 2025; the authors' PyTorch reimplementation lora_rite.py). Per factor, with the partner's reduced QR
// (for A: B = Q_B R_B): the unmagnified gradient ḡ_A = ∇_A·R_B⁺ (skipped, i.e. set to 0, when its RMS exceeds
// update_skipping), all of a model's ḡ scaled by 1/γ when their joint norm γ > clip_unmagnified; an r×r second
// moment carried to the new basis, V ← sym(P V Pᵀ) with P = Q_Bᵀ·Q_B,old, then V ← sym((1−β̂₂)·ḡᵀḡ/m + β̂₂·V);
// K = V^{-1/2} with ε outside the root (eigenvalues clamped at 0); a first moment of preconditioned steps,
// M ← (1−β̂₁)·ḡK + β̂₁·M·Pᵀ; the step Δ_A = M·(R_B⁺)ᵀ. β̂(c) = β(1−βᶜ)/(1−βᶜ⁺¹) for the 0-based step c (Adam's
// bias correction in EMA form). Stated invariance: the whole GL(r), exactly and at every step — from (A S, B S⁻ᵀ)
// the pair stays related by the same S, so M's trajectory is the same. Left out (off in the reference's defaults):
// escaped mass, update capping, weight decay, parameter balancing.
//
// LoRA-Pro (Wang et al., "LoRA-Pro: Are Low-Rank Adapters Properly Optimized?", ICLR 2025; mrflogs/LoRA-Pro,
// peta/optim.py, "efficient" mode, scaling s = 1): the adjusted gradients whose equivalent full gradient
// A·g̃_Bᵀ + g̃_A·Bᵀ is the projection of G = ∂L/∂M nearest to G, P_A·G + (I − P_A)·G·P_B (P_X the projector onto
// X's columns), plus the gauge-selection term X [r, r], free in that equation, chosen to keep g̃ nearest to the raw
// gradients — the Sylvester equation (AᵀA)·X + X·(BᵀB) = −(AᵀA)⁻¹·∇_Bᵀ·B. In our orientation
//   g̃_A = (I − A(AᵀA)⁻¹Aᵀ)·∇_A·(BᵀB)⁻¹ − A·X,   g̃_B = ∇_B·(AᵀA)⁻¹ + B·Xᵀ,
// inverses of Gram + δI (δ = 1e-8, the reference's). Stated property: the equivalent gradient depends on the
// column spaces only, so SGD on g̃ moves M the same way from every gauge-equivalent pair (to first order).
//
// Circuit-Muon's value/output trace rebalance (modded-nanogpt track-3 record, PR #311, train_gpt_circuit_muon.py):
// per head, on the increments of W_V [d, r] and W_O [d, r] (the head's columns of the output projection, i.e. W_oᵀ
// in the core's row-vector layout): partner post-whitening U_V ← s_O·U_V, U_O ← s_V·U_O with
// s_X = (‖W_X‖²/r + λ)^{-1/2}, each leg then rescaled to its former norm; then the scalar gauge direction
// (W_V, −W_O) is removed: x = (⟨W_V, U_V⟩ − ⟨W_O, U_O⟩)/(‖W_V‖² + ‖W_O‖² + 2rλ), U_V −= x·W_V, U_O += x·W_O.
// Stated property: with λ = 0 the trace gap ‖W_V‖² − ‖W_O‖² (the scalar gauge coordinate) does not move to first
// order; the removed part is a gauge tangent, so without whitening the represented motion is unchanged.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include "core/gauge_lie.hpp"
#include "core/quotient.hpp"
#include "core/update_step.hpp"

namespace gaugelab::core {

// ------------------------------------------------------------------------------------------- LoRA-RITE

struct RiteOptions {
  double lr = 1.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;               // added to √λ (the reference's eps, outside the root)
  double clip_unmagnified = 1.0;   // joint-norm clip of every ḡ of the model (<= 0: off)
  double update_skipping = 1.0;    // a factor whose ḡ has RMS above this gets ḡ = 0 (<= 0: off)
};

/// One pair's unmagnified gradients and the reduced QRs they were formed with.
template <class T>
struct RiteUnmagnified {
  Mat<T> g_A, g_B;    // [m, r], [n, r]: ∇_A·R_B⁺ and ∇_B·R_A⁺ (0 when skipped)
  Mat<T> Q_A, Q_B;    // [m, r], [n, r] orthonormal bases of A and B
  Mat<T> Rp_A, Rp_B;  // [r, r] pseudo-inverses of A's and B's R factors
};

namespace rite_detail {

template <class T>
void reduced_qr(const Mat<T>& x /*[k, r]*/, Mat<T>& q, Mat<T>& r_pinv) {
  const Eigen::HouseholderQR<Mat<T>> qr(x);
  const Index r = x.cols();
  q = qr.householderQ() * Mat<T>::Identity(x.rows(), r);
  const Mat<T> rr = qr.matrixQR().topRows(r).template triangularView<Eigen::Upper>();
  r_pinv = Eigen::CompleteOrthogonalDecomposition<Mat<T>>(rr).pseudoInverse();
}

inline double bias_corrected(double beta, long long c) {  // β(1−βᶜ)/(1−βᶜ⁺¹): 0 at c = 0
  return beta * (1 - std::pow(beta, static_cast<double>(c))) / (1 - std::pow(beta, static_cast<double>(c + 1)));
}

template <class T>
Mat<T> sym(const Mat<T>& x) {
  return T(0.5) * (x + x.transpose());
}

}  // namespace rite_detail

/// ḡ_A = ∇_A·R_B⁺, ḡ_B = ∇_B·R_A⁺ with the reference's RMS skip.
template <class T>
RiteUnmagnified<T> rite_unmagnify(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& grad_A /*[m, r]*/,
                                  const Mat<T>& grad_B /*[n, r]*/, const RiteOptions& o) {
  quotient_detail::require_pair_shapes(A, B, grad_A, grad_B, "rite_unmagnify");
  RiteUnmagnified<T> u;
  rite_detail::reduced_qr(A, u.Q_A, u.Rp_A);
  rite_detail::reduced_qr(B, u.Q_B, u.Rp_B);
  u.g_A = grad_A * u.Rp_B;
  u.g_B = grad_B * u.Rp_A;
  auto skip = [&](Mat<T>& g) {
    const double rms = std::sqrt(static_cast<double>(g.squaredNorm()) / static_cast<double>(std::max<Index>(1, g.size())));
    if (o.update_skipping > 0 && rms > o.update_skipping) g.setZero();
  };
  skip(u.g_A);
  skip(u.g_B);
  return u;
}

/// The joint clip factor of a model's pairs: 1/γ if γ = ‖all ḡ‖ > clip_unmagnified, else 1.
template <class T>
double rite_clip_scale(const std::vector<const RiteUnmagnified<T>*>& pairs, const RiteOptions& o) {
  double s2 = 0;
  for (const auto* p : pairs) s2 += static_cast<double>(p->g_A.squaredNorm() + p->g_B.squaredNorm());
  const double gamma = std::sqrt(s2);
  return o.clip_unmagnified > 0 && gamma > o.clip_unmagnified ? 1.0 / gamma : 1.0;
}

/// One factor's step: its ḡ [k, r], its partner's basis now and before, its partner's R⁺; state.moment1 = M
/// [k, r], state.moment2 = V [r, r], state.basis = the partner's previous basis. Returns the increment −lr·Δ.
template <class T>
Mat<T> rite_factor_step(const Mat<T>& g /*[k, r]*/, const Mat<T>& q_partner /*[p, r]*/, const Mat<T>& rp_partner /*[r, r]*/,
                        RuleState<T>& st, const RiteOptions& o) {
  using rite_detail::sym;
  const Index r = g.cols();
  const double b1 = rite_detail::bias_corrected(o.beta1, st.step), b2 = rite_detail::bias_corrected(o.beta2, st.step);
  Mat<T> P = Mat<T>::Zero(r, r);  // basis change; 0 on the first step (no previous basis)
  if (st.basis.size() > 0) P = q_partner.transpose() * st.basis;
  if (st.moment2.size() == 0) st.moment2 = Mat<T>::Zero(r, r);
  if (st.moment1.size() == 0) st.moment1 = Mat<T>::Zero(g.rows(), r);
  const Mat<T> v_moved = sym<T>(P * st.moment2 * P.transpose());
  st.moment2 = sym<T>(T(1 - b2) * (g.transpose() * g) / T(g.rows()) + T(b2) * v_moved);
  const Eigen::SelfAdjointEigenSolver<Mat<T>> es(st.moment2);
  const Vec<T> w = es.eigenvalues().unaryExpr([&](T l) { return T(1) / (std::sqrt(std::max(l, T(0))) + T(o.eps)); });
  const Mat<T> K = sym<T>(es.eigenvectors() * w.asDiagonal() * es.eigenvectors().transpose());
  st.moment1 = T(1 - b1) * (g * K) + T(b1) * st.moment1 * P.transpose();
  st.basis = q_partner;
  ++st.step;
  return -T(o.lr) * st.moment1 * rp_partner.transpose();
}

/// A pair's increments from its unmagnified gradients (clip_scale from rite_clip_scale); sa, sb the factors' states.
template <class T>
PairIncrement<T> rite_increments(const RiteUnmagnified<T>& u, RuleState<T>& sa, RuleState<T>& sb, const RiteOptions& o,
                                 double clip_scale = 1.0) {
  const Mat<T> ga = u.g_A * T(clip_scale), gb = u.g_B * T(clip_scale);
  PairIncrement<T> out;
  out.U_A = rite_factor_step<T>(ga, u.Q_B, u.Rp_B, sa, o);
  out.U_B = rite_factor_step<T>(gb, u.Q_A, u.Rp_A, sb, o);
  return out;
}

// -------------------------------------------------------------------------------------------- LoRA-Pro

/// The adjusted gradients (g̃_A [m, r], g̃_B [n, r]) of a pair from its raw gradients; delta damps the Gram inverses.
template <class T>
PairIncrement<T> lora_pro_gradients(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/, const Mat<T>& grad_A /*[m, r]*/,
                                    const Mat<T>& grad_B /*[n, r]*/, double delta = 1e-8) {
  quotient_detail::require_pair_shapes(A, B, grad_A, grad_B, "lora_pro_gradients");
  const Index r = A.cols();
  const Mat<T> I = Mat<T>::Identity(r, r);
  const Mat<T> ga = A.transpose() * A, gb = B.transpose() * B;  // [r, r]
  const Mat<T> ga_inv = Eigen::CompleteOrthogonalDecomposition<Mat<T>>(ga + T(delta) * I).pseudoInverse();
  const Mat<T> gb_inv = Eigen::CompleteOrthogonalDecomposition<Mat<T>>(gb + T(delta) * I).pseudoInverse();
  const Mat<T> X = solve_sylvester_psd<T>(ga, gb, Mat<T>(-(ga_inv * grad_B.transpose() * B)));  // [r, r]
  PairIncrement<T> out;
  out.U_A = (grad_A - A * (ga_inv * (A.transpose() * grad_A))) * gb_inv - A * X;
  out.U_B = grad_B * ga_inv + B * X.transpose();
  return out;
}

// ---------------------------------------------------------------------------- Circuit-Muon V/O rebalance

/// The rebalanced increments of one head's value and output legs: W_V [d, r], W_O [d, r] (its output-projection
/// columns), increments U_V, U_O of the same shapes; lambda the reference's damping; whiten: the partner
/// post-whitening before the projection (the reference does it).
template <class T>
PairIncrement<T> vo_trace_rebalance(const Mat<T>& W_V, const Mat<T>& W_O, const Mat<T>& U_V, const Mat<T>& U_O,
                                    double lambda = 1e-3, bool whiten = true) {
  quotient_detail::require_pair_shapes(W_V, W_O, U_V, U_O, "vo_trace_rebalance");
  const double r = static_cast<double>(W_V.cols());
  const double sq_v = static_cast<double>(W_V.squaredNorm()), sq_o = static_cast<double>(W_O.squaredNorm());
  PairIncrement<T> u{U_V, U_O};
  if (whiten) {
    const double n_v = static_cast<double>(U_V.norm()), n_o = static_cast<double>(U_O.norm());
    u.U_A *= T(1 / std::sqrt(std::max(sq_o / r + lambda, 1e-12)));
    u.U_B *= T(1 / std::sqrt(std::max(sq_v / r + lambda, 1e-12)));
    if (u.U_A.norm() > 0) u.U_A *= T(n_v / static_cast<double>(u.U_A.norm()));
    if (u.U_B.norm() > 0) u.U_B *= T(n_o / static_cast<double>(u.U_B.norm()));
  }
  const double a_v = static_cast<double>((W_V.array() * u.U_A.array()).sum());
  const double a_o = static_cast<double>((W_O.array() * u.U_B.array()).sum());
  const double x = (a_v - a_o) / std::max(sq_v + sq_o + 2 * r * lambda, 1e-12);
  u.U_A -= T(x) * W_V;
  u.U_B += T(x) * W_O;
  return u;
}

// Compiled once for float and double in core/quotient_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_FACTOR_LITERATURE_INSTANCES(EXTERN, T) \
  EXTERN template void rite_detail::reduced_qr<T>(const Mat<T>&, Mat<T>&, Mat<T>&); \
  EXTERN template Mat<T> rite_detail::sym<T>(const Mat<T>&); \
  EXTERN template RiteUnmagnified<T> rite_unmagnify<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, const RiteOptions&); \
  EXTERN template double rite_clip_scale<T>(const std::vector<const RiteUnmagnified<T>*>&, const RiteOptions&); \
  EXTERN template Mat<T> rite_factor_step<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, RuleState<T>&, const RiteOptions&); \
  EXTERN template PairIncrement<T> rite_increments<T>(const RiteUnmagnified<T>&, RuleState<T>&, RuleState<T>&, const RiteOptions&, double); \
  EXTERN template PairIncrement<T> lora_pro_gradients<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, double); \
  EXTERN template PairIncrement<T> vo_trace_rebalance<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, double, bool);
GAUGELAB_CORE_UPDATE_FACTOR_LITERATURE_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_FACTOR_LITERATURE_INSTANCES(extern, double)

}  // namespace gaugelab::core
