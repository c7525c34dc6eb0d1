// core/qk_clip.hpp (the reference of the trainer's QK-Clip) on its own: recomputing every causal logit
// q_t·k_s/√d_h of a layer after the clip, the heads that were over τ peak at τ exactly (their logits all
// scaled by τ/S) and the others are unchanged bit for bit.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/qk_clip.hpp"
#include "core/random.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::Index;
using core::Mat;
using core::Vec;

namespace {

// Causal logits per head: [h] blocks of [T, T] (entries s > t are not used). X [T, d_in].
std::vector<Mat<double>> logits(const core::QkClipRows<double>& r, const Mat<double>& X, Index h) {
  const Index d = r.W_q.rows(), dh = d / h;
  Mat<double> Q = X * r.W_q.transpose(), K = X * r.W_k.transpose();  // [T, d]
  if (r.b_q.size() > 0) {
    Q.rowwise() += r.b_q.transpose();
    K.rowwise() += r.b_k.transpose();
  }
  std::vector<Mat<double>> out;
  for (Index i = 0; i < h; ++i)
    out.push_back(Q.middleCols(i * dh, dh) * K.middleCols(i * dh, dh).transpose() / std::sqrt(static_cast<double>(dh)));
  return out;
}

double causal_max(const Mat<double>& S) {
  double m = -INFINITY;
  for (Index t = 0; t < S.rows(); ++t)
    for (Index s = 0; s <= t; ++s) m = std::max(m, S(t, s));
  return m;
}

}  // namespace

TEST_CASE("core qk_clip: heads over tau peak at tau afterwards, the others are untouched") {
  core::Rng rng(11);
  const Index h = 4, dh = 3, d_in = 6, T = 7;
  core::QkClipRows<double> rows{core::randn<double>(rng, h * dh, d_in, 2.0), core::randn<double>(rng, h * dh, d_in, 2.0),
                                core::randn_vec<double>(rng, h * dh), core::randn_vec<double>(rng, h * dh)};
  const Mat<double> X = core::randn<double>(rng, T, d_in);
  const auto before = logits(rows, X, h);
  Vec<double> s_max(h);
  for (Index i = 0; i < h; ++i) s_max(i) = causal_max(before[static_cast<std::size_t>(i)]);
  Vec<double> sorted = s_max;
  std::sort(sorted.data(), sorted.data() + h);
  const double tau = 0.5 * (sorted(1) + sorted(2));  // two heads over, two under
  REQUIRE(core::qk_clip_count(s_max, tau) == 2);
  const auto after = logits(core::qk_clip(rows, s_max, tau), X, h);
  for (Index i = 0; i < h; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (s_max(i) > tau) {
      CHECK(std::abs(causal_max(after[k]) - tau) <= 1e-12 * tau);
      CHECK((after[k] - before[k] * (tau / s_max(i))).cwiseAbs().maxCoeff() <= 1e-12 * before[k].cwiseAbs().maxCoeff());
    } else {
      CHECK(after[k] == before[k]);
    }
  }
  CHECK_THROWS(core::qk_clip_factors(s_max, 0.0, dh));  // tau must be positive
}

}  // namespace GAUGELAB_TU
