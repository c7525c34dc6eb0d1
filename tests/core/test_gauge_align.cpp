// Model alignment (core/gauge_align.hpp, core/assignment.hpp; seed 001 Prop. 47, Algorithm 3), in
// float64 at many random points: Procrustes recovers a known rotation; the assignment solver finds the
// brute-force optimum (table of sizes) and undoes a known permutation; a canonical layer moved by a
// random residual element (orthogonal gauges and a head permutation) is aligned back exactly; the
// Procrustes head cost never leaves more distance than Algorithm 3's; hidden units are re-paired.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // Eigen's AVX-512 GEMM packing (see test_gauge_attention)

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "core/gauge_align.hpp"
#include "core/gauge_fix_qr.hpp"
#include "core/gauge_sampling.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::AttentionLayer;
using core::Index;
using core::Mat;
using core::Permutation;

namespace {

constexpr int kPoints = 200;
// Everything below is a handful of float64 products, QRs and SVDs of matrices with entries O(1) and
// at most ~40 rows: rounding stays near 1e-14; 1e-10 separates "recovered" from "not" by many orders.
constexpr double kTol = 1e-10;

double assignment_score(const Mat<double>& s, const Permutation& p) {
  double v = 0;
  for (std::size_t j = 0; j < p.size(); ++j) v += s(static_cast<Index>(j), p[j]);
  return v;
}

/// Largest entry-wise difference of two layers' head blocks (b_o is gauge-inert and not compared).
double max_head_difference(const AttentionLayer<double>& a, const AttentionLayer<double>& b) {
  return std::max({(a.W_q - b.W_q).cwiseAbs().maxCoeff(), (a.W_k - b.W_k).cwiseAbs().maxCoeff(),
                      (a.W_v - b.W_v).cwiseAbs().maxCoeff(), (a.W_o - b.W_o).cwiseAbs().maxCoeff(),
                      (a.b_q - b.b_q).cwiseAbs().maxCoeff(), (a.b_k - b.b_k).cwiseAbs().maxCoeff(),
                      (a.b_v - b.b_v).cwiseAbs().maxCoeff()});
}

/// A canonical (QR-slice) layer moved by a random residual element: orthogonal S_i, C_i and a permutation.
core::LayerGauge<double> random_residual(core::Rng& rng, Index h, Index dk, Index dv) {
  core::LayerGauge<double> g;
  for (Index i = 0; i < h; ++i) {
    g.s.push_back(core::random_orthogonal<double>(rng, dk));
    g.c.push_back(core::random_orthogonal<double>(rng, dv));
  }
  g.perm = core::random_permutation(rng, h);
  return g;
}

}  // namespace

TEST_CASE("orthogonal Procrustes recovers a known orthogonal matrix", "[core][align]") {
  core::Rng rng(11);
  for (int i = 0; i < kPoints; ++i) {
    const Index k = 1 + i % 6, n = k + 1 + i % 5;
    const Mat<double> source = test::gaussian<double>(rng, n, k);
    const Mat<double> r0 = core::random_orthogonal<double>(rng, k);  // Haar: reflections included
    const Mat<double> r = core::orthogonal_procrustes<double>(source * r0, source);
    CHECK((r - r0).cwiseAbs().maxCoeff() < kTol);
    CHECK((r.transpose() * r - Mat<double>::Identity(k, k)).cwiseAbs().maxCoeff() < kTol);
  }
}

TEST_CASE("the assignment solver reaches the brute-force optimum", "[core][align]") {
  core::Rng rng(12);
  struct Case {
    Index n;
    int draws;
  };
  for (const Case c : {Case{1, 5}, Case{2, 20}, Case{3, 40}, Case{5, 60}, Case{7, 20}}) {
    for (int d = 0; d < c.draws; ++d) {
      const Mat<double> s = test::gaussian<double>(rng, c.n, c.n);
      const Permutation p = core::max_score_assignment(s);
      REQUIRE(core::is_permutation(p));
      Permutation q = core::identity_permutation(c.n);
      double best = -1e300;
      do best = std::max(best, assignment_score(s, q));
      while (std::next_permutation(q.begin(), q.end()));
      INFO("n " << c.n);
      // the integer scaling of assignment.hpp costs at most n·2^-40 of max|s| per total
      CHECK(assignment_score(s, p) >= best - 1e-9);
      CHECK(assignment_score(-s, core::min_cost_assignment(-s)) <= -best + 1e-9);
    }
  }
  CHECK_THROWS_AS(core::max_score_assignment(Mat<double>::Zero(2, 3)), std::invalid_argument);
  Mat<double> bad = Mat<double>::Zero(2, 2);
  bad(0, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(core::max_score_assignment(bad), std::invalid_argument);
}

TEST_CASE("a permuted copy is matched back by its distances", "[core][align]") {
  core::Rng rng(13);
  for (int i = 0; i < kPoints; ++i) {
    const Index n = 2 + i % 40;
    const Mat<double> a = test::gaussian<double>(rng, n, 6);
    const Permutation p0 = core::random_permutation(rng, n);
    Mat<double> b(n, 6);
    for (Index j = 0; j < n; ++j) b.row(p0[static_cast<std::size_t>(j)]) = a.row(j);  // b[p0[j]] = a[j]
    Mat<double> cost(n, n);
    for (Index j = 0; j < n; ++j)
      for (Index k = 0; k < n; ++k) cost(j, k) = (a.row(j) - b.row(k)).squaredNorm();
    CHECK(core::min_cost_assignment(cost) == p0);
  }
}

TEST_CASE("a canonical layer moved by a random residual element is aligned back exactly", "[core][align]") {
  core::Rng rng(14);
  for (int i = 0; i < kPoints; ++i) {
    const Index h = 1 + i % 6, dk = 1 + i % 4, dv = 1 + (i / 4) % 4, d = 9;
    const AttentionLayer<double> a = core::canonicalize_layer(test::random_layer<double>(rng, d, h, dk, dv)).layer;
    const AttentionLayer<double> b = core::apply_layer_gauge(a, random_residual(rng, h, dk, dv));
    for (const core::HeadCost cost : {core::HeadCost::procrustes, core::HeadCost::seed}) {
      const core::LayerAlignment<double> al = core::align_layer_heads(a, b, cost);
      const double err = max_head_difference(a, core::apply_layer_gauge(b, al.gauge));
      INFO("h " << h << " dk " << dk << " dv " << dv << " cost " << static_cast<int>(cost));
      // Algorithm 3's cost ignores V/O and the residual rotation: it can mis-pair heads whose Q/K
      // blocks are close only after rotation, so exact recovery is asserted for the Procrustes cost,
      // and for both when there is no rotation to undo (d_k = 1: O(1) = {±1} moves W_q by a sign only).
      if (cost == core::HeadCost::procrustes) CHECK(err < kTol);
      for (const double dist : al.head_distance2)
        if (cost == core::HeadCost::procrustes) CHECK(dist < kTol);
    }
  }
}

TEST_CASE("the Procrustes head cost leaves no more distance than Algorithm 3's or the identity order", "[core][align]") {
  core::Rng rng(15);
  for (int i = 0; i < kPoints; ++i) {
    const Index h = 2 + i % 5, dk = 1 + i % 4, dv = 1 + (i / 4) % 4, d = 8;
    const AttentionLayer<double> a = core::canonicalize_layer(test::random_layer<double>(rng, d, h, dk, dv)).layer;
    const AttentionLayer<double> b = core::canonicalize_layer(test::random_layer<double>(rng, d, h, dk, dv)).layer;
    auto total = [](const core::LayerAlignment<double>& al) {
      return std::accumulate(al.head_distance2.begin(), al.head_distance2.end(), 0.0);
    };
    const double ours = total(core::align_layer_heads(a, b, core::HeadCost::procrustes));
    const double seed = total(core::align_layer_heads(a, b, core::HeadCost::seed));
    const double unrotated = total(core::align_layer_heads(a, b, core::HeadCost::procrustes, /*procrustes=*/false));
    CHECK(ours <= seed * (1 + 1e-12));
    CHECK(ours <= unrotated * (1 + 1e-12));
  }
}

TEST_CASE("hidden units permuted with their weights are re-paired", "[core][align]") {
  core::Rng rng(16);
  for (int i = 0; i < kPoints; ++i) {
    const Index hidden = 2 + i % 64;
    const Mat<double> in_a = test::gaussian<double>(rng, hidden, 5), out_a = test::gaussian<double>(rng, hidden, 4);
    const Permutation p0 = core::random_permutation(rng, hidden);  // a's unit j sits at b's p0[j]
    Mat<double> in_b(hidden, 5), out_b(hidden, 4);
    for (Index j = 0; j < hidden; ++j) {
      in_b.row(p0[static_cast<std::size_t>(j)]) = in_a.row(j);
      out_b.row(p0[static_cast<std::size_t>(j)]) = out_a.row(j);
    }
    // equal norms within each pair, so the score's optimum is the distance's: a's unit j is b's p0[j]
    CHECK(core::match_units<double>(in_a, out_a, in_b, out_b) == p0);
  }
}

}  // namespace GAUGELAB_TU
