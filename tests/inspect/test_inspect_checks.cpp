// The float64 half of inspect (gpt2/inspect/checks.hpp): counts, the A7 Gram route against a dense SVD,
// the canonical slices as group elements (each reaches its condition and is idempotent), percentiles.
#include <Eigen/SVD>
#include <catch2/catch.hpp>

#include "core/gauge_fix_qr.hpp"
#include "core/gauge_sampling.hpp"
#include "gpt2/inspect/checks.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

namespace core = gaugelab::core;
using namespace gaugelab::gpt2::inspect;
using core::Index;
using core::Mat;

namespace {

// Float64 identities of orthogonal-matrix arithmetic on [64, 64]-sized blocks: a few hundred ε.
constexpr double kExact = 1e-10;
// κ = σ_max/σ_min: σ_min from the Gram is exact to kExact·σ_max, so κ to kExact·κ² relative; κ is a few here.
constexpr double kKappaRel = 1e-8;
// Rank tolerance handed to the checks (the verb's default).
constexpr double kRankTol = 1e-6;

core::AttentionLayer<double> random_layer(std::uint64_t seed, Index d, Index h, Index dk) {
  core::Rng rng(seed);
  core::AttentionLayer<double> l;
  l.n_heads = h;
  l.W_q = core::randn<double>(rng, d, h * dk);
  l.W_k = core::randn<double>(rng, d, h * dk);
  l.W_v = core::randn<double>(rng, d, h * dk);
  l.W_o = core::randn<double>(rng, h * dk, d);
  l.b_q = core::randn<double>(rng, 1, h * dk);
  l.b_k = core::randn<double>(rng, 1, h * dk);
  l.b_v = core::randn<double>(rng, 1, h * dk);
  l.b_o = core::randn<double>(rng, 1, d);
  return l;
}

double max_gauge_deviation(const core::LayerGauge<double>& g) {
  double dev = 0;
  for (const auto& s : g.s) dev = std::max(dev, (s - Mat<double>::Identity(s.rows(), s.cols())).cwiseAbs().maxCoeff());
  for (const auto& c : g.c) dev = std::max(dev, (c - Mat<double>::Identity(c.rows(), c.cols())).cwiseAbs().maxCoeff());
  return dev;
}

}  // namespace

TEST_CASE("gauge counts of Cor. 4 and section 7.2", "[inspect]") {
  const GaugeCounts g = gauge_counts(12, 12, 64, 64);
  CHECK(g.per_layer == 98304);        // Cor. 4: 12 x (64^2 + 64^2)
  CHECK(g.total == 1179648);          // §7.1: ~1.18M for a 12-layer base model
  CHECK(g.removed_per_layer == 12 * (64 * 65 / 2) * 2);
  CHECK(g.residual_per_layer == 12 * (64 * 63 / 2) * 2);
  CHECK(g.removed_per_layer + g.residual_per_layer == g.per_layer);
  const GaugeCounts m = gauge_counts(24, 16, 64, 48);
  CHECK(m.per_layer == 16 * (64 * 64 + 48 * 48));
  CHECK(m.removed_total + m.residual_total == m.total);
  CHECK_THROWS_AS(gauge_counts(0, 12, 64, 64), std::invalid_argument);
}

TEST_CASE("A7 through the h x h Gram equals the dense SVD of the stacked h x d^2 forms", "[inspect]") {
  const Index d = 12, h = 4, dk = 3;
  core::AttentionLayer<double> l = random_layer(1, d, h, dk);
  Mat<double> stacked(h, d * d);  // [h, d²]
  for (Index i = 0; i < h; ++i) {
    const core::AttentionHead<double> hd = core::head(l, i);
    const Mat<double> m = hd.W_q * hd.W_k.transpose();
    stacked.row(i) = Eigen::Map<const core::RowVec<double>>(m.data(), d * d);
  }
  const core::Vec<double> sv = Eigen::JacobiSVD<Mat<double>>(stacked).singularValues();
  const BilinearRank r = bilinear_rank(l, kRankTol);
  CHECK(r.rank == h);
  CHECK(std::abs(r.sigma_max - sv(0)) <= kExact * sv(0));
  CHECK(std::abs(r.sigma_min_nonzero - sv(h - 1)) <= kExact * sv(0));
  CHECK(std::abs(r.kappa - sv(0) / sv(h - 1)) <= kKappaRel * r.kappa);

  // Head 3's form made 2.5 x head 0's (W_q scaled, W_k copied): rank drops to h − 1.
  l.W_q.middleCols(3 * dk, dk) = 2.5 * l.W_q.middleCols(0, dk);
  l.W_k.middleCols(3 * dk, dk) = l.W_k.middleCols(0, dk);
  CHECK(bilinear_rank(l, kRankTol).rank == h - 1);
}

TEST_CASE("projection spectra: ranks, kappa, and a rank-deficient W_V", "[inspect]") {
  core::AttentionLayer<double> l = random_layer(2, 16, 2, 4);
  l.W_v.col(0) = l.W_v.col(1);  // head 0's W_V loses a column
  const std::vector<HeadSpectra> s = projection_spectra(l, kRankTol);
  REQUIRE(s.size() == 2);
  CHECK(s[0].v.rank == 3);
  CHECK(s[1].v.rank == 4);
  CHECK(s[0].q.rank == 4);
  CHECK(s[1].o.kappa == Approx(s[1].o.sigma_max / s[1].o.sigma_min));
}

TEST_CASE("canonical slices: the QR gauge reproduces Algorithm 1, each slice reaches its condition and is idempotent",
          "[inspect]") {
  const Index d = 16, h = 3, dk = 4;
  const core::AttentionLayer<double> l = random_layer(3, d, h, dk);
  core::Rng rng(5);
  const Mat<double> x = core::randn<double>(rng, 40, d);  // [N, d] layer inputs
  const core::AttentionLayer<double> alg1 = core::canonicalize_layer(l).layer;
  const core::AttentionLayer<double> viaq = core::apply_layer_gauge(l, slice_gauge(l, Slice::qr, x));
  CHECK((viaq.W_k - alg1.W_k).cwiseAbs().maxCoeff() <= kExact);
  CHECK((viaq.W_o - alg1.W_o).cwiseAbs().maxCoeff() <= kExact);
  CHECK((viaq.b_q - alg1.b_q).cwiseAbs().maxCoeff() <= kExact);

  for (Slice s : all_slices()) {
    INFO("slice " << slice_name(s));
    const core::LayerGauge<double> g = slice_gauge(l, s, x);
    const core::AttentionLayer<double> c = core::apply_layer_gauge(l, g);
    for (const HeadMetrics& m : head_metrics(c, x)) {
      CHECK(m.v_orthonormality <= kExact);  // every slice fixes V/O by QR
      if (s == Slice::qr) CHECK(m.q_orthonormality <= kExact);
      if (s == Slice::gram) CHECK(m.qk_gram_imbalance <= kExact);
      if (s == Slice::covariance) CHECK(m.qk_cov_imbalance <= kExact);
    }
    const std::vector<HeadMetrics> mc = head_metrics(c, x);
    for (std::size_t j = 1; j < mc.size(); ++j) CHECK(mc[j - 1].key_norm >= mc[j].key_norm);  // descending ‖W_K‖_F
    // Function preserved, and the slice of the slice is the identity element.
    CHECK((core::layer_output(c, x, {true}) - core::layer_output(l, x, {true})).cwiseAbs().maxCoeff() <= kExact);
    const core::LayerGauge<double> again = slice_gauge(c, s, x);
    CHECK(max_gauge_deviation(again) <= kExact);
    CHECK(again.perm == core::identity_permutation(h));
  }
  CHECK_THROWS_AS(parse_slice("polar"), std::invalid_argument);
}

TEST_CASE("LRM head stats: drift and the per-coordinate imbalance GaugeFix leaves", "[inspect]") {
  // One head, d_k 2: r_Q = (2, 8), r_K = (1, 1). RMS s_Q = √34, s_K = 1; GaugeFix divides r_Q by
  // g = (s_Q/s_K)^½ and multiplies r_K by g, so both RMS become 34^¼ while the coordinate ratios 2/g², 8/g²
  // stay unequal: |log| = |log(2/√34)|, |log(8/√34)|.
  core::Vec<double> rq(2), rk(2), bq(2), bk(2);
  rq << 2, 8;
  rk << 1, 1;
  bq << 0.1, 0.2;
  bk << 0.3, 0.4;
  const std::vector<LrmHeadStats> s = lrm_head_stats(rq, rk, bq, bk, 1);
  REQUIRE(s.size() == 1);
  CHECK(s[0].s_q == Approx(std::sqrt(34.0)));
  CHECK(s[0].s_k == Approx(1.0));
  CHECK(s[0].product == Approx(std::sqrt(34.0)));
  CHECK(s[0].log_ratio == Approx(0.5 * std::log(34.0)));
  const double a = std::abs(std::log(2 / std::sqrt(34.0))), b = std::abs(std::log(8 / std::sqrt(34.0)));
  CHECK(s[0].coord_max_after_fix == Approx(std::max(a, b)).epsilon(1e-9));
  CHECK(s[0].coord_rms_after_fix == Approx(std::sqrt((a * a + b * b) / 2)).epsilon(1e-9));
}

TEST_CASE("distribution percentiles follow numpy's linear interpolation", "[inspect]") {
  std::vector<double> v;
  for (int i = 101; i >= 1; --i) v.push_back(i);  // 1..101, unsorted
  const Distribution d = distribution(v);
  CHECK(d.n == 101);
  CHECK(d.min == 1);
  CHECK(d.median == 51);
  CHECK(d.p90 == Approx(91));
  CHECK(d.p99 == Approx(100));
  CHECK(d.max == 101);
  CHECK(d.mean == Approx(51));
  CHECK(distribution({3.0, 1.0}).median == Approx(2.0));
}

}  // namespace GAUGELAB_TU
