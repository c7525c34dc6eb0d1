// The literature's quotient-aware factor updates (core/update_factor_literature.hpp), each tested for the invariance
// its source states, at many random points in float64: LoRA-RITE keeps gauge-equivalent pairs gauge-equivalent at
// every step (the same M trajectory; AdamW, the control, does not); LoRA-Pro's equivalent gradient is the projection
// P_A·G + (I − P_A)·G·P_B, the same from every representative, and its X is the minimiser it claims to be; Circuit-
// Muon's rebalance leaves the trace gap unmoved to first order and, without whitening, the represented motion as is.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // Eigen's AVX-512 GEMM packing (see test_gauge_attention)

#include <catch2/catch.hpp>

#include "core/gauge_sampling.hpp"
#include "core/update_factor_literature.hpp"
#include "core/update_rules.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::Index;
using core::Mat;

namespace {

constexpr int kPoints = 50;

/// The quadratic loss ½‖A·Bᵀ − T‖²: G = A·Bᵀ − T, ∇_A = G·B, ∇_B = Gᵀ·A.
struct Quadratic {
  Mat<double> target;
  Mat<double> G(const Mat<double>& A, const Mat<double>& B) const { return A * B.transpose() - target; }
};

Mat<double> projector(const Mat<double>& X) {  // onto X's columns
  return X * (X.transpose() * X).inverse() * X.transpose();
}

}  // namespace

TEST_CASE("LoRA-RITE: gauge-equivalent pairs stay gauge-equivalent at every step, AdamW does not", "[core][literature]") {
  core::Rng rng(21);
  for (int i = 0; i < kPoints; ++i) {
    const Index m = 5 + i % 4, n = 4 + i % 3, r = 1 + i % 3;
    const Quadratic f{test::gaussian<double>(rng, m, n)};
    Mat<double> A = test::gaussian<double>(rng, m, r), B = test::gaussian<double>(rng, n, r);
    const Mat<double> S = core::random_gl<double>(rng, r, 10.0);
    Mat<double> A2 = A * S, B2 = B * S.inverse().transpose();
    core::RiteOptions o;
    o.lr = 0.05;
    o.update_skipping = 0;  // the reference skips any ḡ of RMS > 1; these random targets give larger ones
    o.clip_unmagnified = 10;  // on, and invariant: ḡ only rotates between representatives
    core::RuleState<double> sa, sb, sa2, sb2;
    double worst = 0, scale = 0;
    for (int t = 0; t < 6; ++t) {
      const Mat<double> G = f.G(A, B), G2 = f.G(A2, B2);
      const auto u = core::rite_unmagnify<double>(A, B, G * B, G.transpose() * A, o);
      const auto u2 = core::rite_unmagnify<double>(A2, B2, G2 * B2, G2.transpose() * A2, o);
      const auto d = core::rite_increments(u, sa, sb, o, core::rite_clip_scale<double>({&u}, o));
      const auto d2 = core::rite_increments(u2, sa2, sb2, o, core::rite_clip_scale<double>({&u2}, o));
      A += d.U_A, B += d.U_B, A2 += d2.U_A, B2 += d2.U_B;
      worst = std::max(worst, (A * B.transpose() - A2 * B2.transpose()).cwiseAbs().maxCoeff());
      scale = std::max(scale, (d.U_A * B.transpose()).cwiseAbs().maxCoeff());
    }
    INFO("m " << m << " n " << n << " r " << r);
    CHECK(scale > 1e-6);          // the steps moved M
    CHECK(worst < 1e-9);          // ... identically from both representatives
  }
  // the control: AdamW per factor from the same two representatives separates
  core::Rng rng2(22);
  const Quadratic f{test::gaussian<double>(rng2, 6, 5)};
  Mat<double> A = test::gaussian<double>(rng2, 6, 2), B = test::gaussian<double>(rng2, 5, 2);
  const Mat<double> S = core::random_gl<double>(rng2, 2, 10.0);
  Mat<double> A2 = A * S, B2 = B * S.inverse().transpose();
  core::AdamWOptions ao;
  ao.lr = 0.05;
  ao.weight_decay = 0;
  core::RuleState<double> s1, s2, s3, s4;
  for (int t = 0; t < 6; ++t) {
    const Mat<double> G = f.G(A, B), G2 = f.G(A2, B2);
    const Mat<double> ua = core::propose(core::RuleOptions(ao), A, Mat<double>(G * B), s1).U;
    const Mat<double> ub = core::propose(core::RuleOptions(ao), B, Mat<double>(G.transpose() * A), s2).U;
    const Mat<double> ua2 = core::propose(core::RuleOptions(ao), A2, Mat<double>(G2 * B2), s3).U;
    const Mat<double> ub2 = core::propose(core::RuleOptions(ao), B2, Mat<double>(G2.transpose() * A2), s4).U;
    A += ua, B += ub, A2 += ua2, B2 += ub2;
  }
  CHECK((A * B.transpose() - A2 * B2.transpose()).cwiseAbs().maxCoeff() > 1e-3);
}

TEST_CASE("LoRA-RITE's first step is Adam's in the partner's basis, and the skip and clip act", "[core][literature]") {
  core::Rng rng(23);
  const Mat<double> A = test::gaussian<double>(rng, 6, 2), B = test::gaussian<double>(rng, 5, 2);
  const Mat<double> gA = test::gaussian<double>(rng, 6, 2), gB = test::gaussian<double>(rng, 5, 2);
  core::RiteOptions o;
  o.clip_unmagnified = 0, o.update_skipping = 0, o.eps = 0;
  const auto u = core::rite_unmagnify<double>(A, B, gA, gB, o);
  core::RuleState<double> sa, sb;
  const auto d = core::rite_increments(u, sa, sb, o);
  // step 0: β̂ = 0, so V = ḡᵀḡ/m, M = ḡ·V^{-1/2}, Δ = M·R_B⁺ᵀ
  const Mat<double> V = u.g_A.transpose() * u.g_A / 6.0;
  const Eigen::SelfAdjointEigenSolver<Mat<double>> es(V);
  const Mat<double> K = es.eigenvectors() * es.eigenvalues().cwiseSqrt().cwiseInverse().asDiagonal() * es.eigenvectors().transpose();
  CHECK((d.U_A + u.g_A * K * u.Rp_B.transpose()).cwiseAbs().maxCoeff() < 1e-10);
  CHECK((u.g_A - gA * u.Rp_B).cwiseAbs().maxCoeff() < 1e-12);
  core::RiteOptions skip;
  skip.update_skipping = 1e-6;  // every ḡ here has RMS ≫ 1e-6
  CHECK(core::rite_unmagnify<double>(A, B, gA, gB, skip).g_A.norm() == 0);
  core::RiteOptions clip;
  clip.clip_unmagnified = 1e-3;
  const double s = core::rite_clip_scale<double>({&u}, clip);
  CHECK(std::abs(s * std::sqrt(u.g_A.squaredNorm() + u.g_B.squaredNorm()) - 1.0) < 1e-12);
}

TEST_CASE("LoRA-Pro: the equivalent gradient is the nearest projection of G, the same from every representative",
          "[core][literature]") {
  core::Rng rng(24);
  for (int i = 0; i < kPoints; ++i) {
    const Index m = 5 + i % 4, n = 4 + i % 3, r = 1 + i % 3;
    const Mat<double> A = test::gaussian<double>(rng, m, r), B = test::gaussian<double>(rng, n, r);
    const Mat<double> G = test::gaussian<double>(rng, m, n);
    const auto g = core::lora_pro_gradients<double>(A, B, G * B, G.transpose() * A, 0.0);
    const Mat<double> equiv = A * g.U_B.transpose() + g.U_A * B.transpose();
    const Mat<double> PA = projector(A), PB = projector(B);
    const Mat<double> want = PA * G + (Mat<double>::Identity(m, m) - PA) * G * PB;
    CHECK((equiv - want).cwiseAbs().maxCoeff() < 1e-9 * (1 + G.cwiseAbs().maxCoeff()));
    // from a gauge-equivalent pair (gradients as covectors) the same equivalent gradient
    const Mat<double> S = core::random_gl<double>(rng, r, 10.0);
    const Mat<double> A2 = A * S, B2 = B * S.inverse().transpose();
    const auto g2 = core::lora_pro_gradients<double>(A2, B2, G * B2, G.transpose() * A2, 0.0);
    CHECK((A2 * g2.U_B.transpose() + g2.U_A * B2.transpose() - equiv).cwiseAbs().maxCoeff() < 1e-8 * (1 + want.cwiseAbs().maxCoeff()));
    // X minimises ‖g̃ − ∇‖²: moving along the free direction (−A·E, B·Eᵀ) only increases it
    const Mat<double> E = test::gaussian<double>(rng, r, r) * 1e-3;
    const double at = (g.U_A - G * B).squaredNorm() + (g.U_B - G.transpose() * A).squaredNorm();
    const double moved = (g.U_A - A * E - G * B).squaredNorm() + (g.U_B + B * E.transpose() - G.transpose() * A).squaredNorm();
    CHECK(moved >= at - 1e-12 * at);
  }
}

TEST_CASE("Circuit-Muon's V/O rebalance: the trace gap does not move, without whitening neither does the motion",
          "[core][literature]") {
  core::Rng rng(25);
  for (int i = 0; i < kPoints; ++i) {
    const Index d = 6 + i % 5, r = 1 + i % 4;
    const Mat<double> WV = test::gaussian<double>(rng, d, r), WO = test::gaussian<double>(rng, d, r);
    const Mat<double> UV = test::gaussian<double>(rng, d, r), UO = test::gaussian<double>(rng, d, r);
    auto gap_rate = [&](const core::PairIncrement<double>& u) {  // d/dt (‖W_V‖² − ‖W_O‖²) / 2
      return (WV.array() * u.U_A.array()).sum() - (WO.array() * u.U_B.array()).sum();
    };
    const double before = std::abs(gap_rate({UV, UO}));
    for (const bool whiten : {false, true}) {
      const auto u = core::vo_trace_rebalance<double>(WV, WO, UV, UO, 0.0, whiten);
      CHECK(std::abs(gap_rate(u)) < 1e-12 * (1 + before));
      if (!whiten) {  // the removed part is the gauge tangent x·(W_V, −W_O): U_V·W_Oᵀ + W_V·U_Oᵀ unchanged
        const Mat<double> m0 = UV * WO.transpose() + WV * UO.transpose(), m1 = u.U_A * WO.transpose() + WV * u.U_B.transpose();
        CHECK((m1 - m0).cwiseAbs().maxCoeff() < 1e-12 * (1 + m0.cwiseAbs().maxCoeff()));
      }
    }
    // λ > 0 shrinks x, so the gap still moves a little (the reference's damping)
    const auto damped = core::vo_trace_rebalance<double>(WV, WO, UV, UO, 0.5, false);
    if (before > 1e-6) CHECK(std::abs(gap_rate(damped)) > 0);
  }
}

}  // namespace GAUGELAB_TU
