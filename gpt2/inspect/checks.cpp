#include "gpt2/inspect/checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <Eigen/SVD>

#include "core/coordinates.hpp"
#include "core/gauge_fix_gram.hpp"
#include "core/gauge_fix_lrm.hpp"
#include "core/gauge_fix_qr.hpp"

namespace gaugelab::gpt2::inspect {

namespace core = gaugelab::core;
using core::Index;
using core::Mat;

GaugeCounts gauge_counts(std::int64_t layers, std::int64_t heads, std::int64_t d_k, std::int64_t d_v) {
  if (layers < 1 || heads < 1 || d_k < 1 || d_v < 1)
    throw std::invalid_argument("gauge_counts: layers, heads, d_k and d_v must be >= 1");
  GaugeCounts c;
  c.per_layer = heads * (d_k * d_k + d_v * d_v);
  c.removed_per_layer = heads * (d_k * (d_k + 1) / 2 + d_v * (d_v + 1) / 2);
  c.residual_per_layer = heads * (d_k * (d_k - 1) / 2 + d_v * (d_v - 1) / 2);
  c.total = layers * c.per_layer;
  c.removed_total = layers * c.removed_per_layer;
  c.residual_total = layers * c.residual_per_layer;
  return c;
}

Spectrum spectrum(const Mat<double>& m, double rel_tol) {
  Eigen::BDCSVD<Mat<double>> svd(m);  // values only
  const auto& s = svd.singularValues();
  Spectrum out;
  out.sigma_max = s.size() ? s(0) : 0.0;
  out.sigma_min = s.size() ? s(s.size() - 1) : 0.0;
  out.kappa = out.sigma_min > 0 ? out.sigma_max / out.sigma_min : std::numeric_limits<double>::infinity();
  for (Index i = 0; i < s.size(); ++i) out.rank += s(i) > rel_tol * out.sigma_max ? 1 : 0;
  return out;
}

std::vector<HeadSpectra> projection_spectra(const core::AttentionLayer<double>& layer, double rel_tol) {
  std::vector<HeadSpectra> out;
  for (Index i = 0; i < layer.n_heads; ++i) {
    const core::AttentionHead<double> h = core::head(layer, i);
    out.push_back({spectrum(h.W_q, rel_tol), spectrum(h.W_k, rel_tol), spectrum(h.W_v, rel_tol), spectrum(h.W_o, rel_tol)});
  }
  return out;
}

Mat<double> bilinear_gram(const core::AttentionLayer<double>& layer) {
  core::require_layer(layer, "bilinear_gram");
  const Index h = layer.n_heads, dk = layer.d_k();
  const Mat<double> qq = layer.W_q.transpose() * layer.W_q;  // [h·dk, h·dk]
  const Mat<double> kk = layer.W_k.transpose() * layer.W_k;  // [h·dk, h·dk]
  Mat<double> g(h, h);
  for (Index i = 0; i < h; ++i)
    for (Index j = 0; j <= i; ++j)
      g(i, j) = g(j, i) = qq.block(i * dk, j * dk, dk, dk).cwiseProduct(kk.block(i * dk, j * dk, dk, dk)).sum();
  return g;
}

BilinearRank bilinear_rank(const core::AttentionLayer<double>& layer, double rel_tol) {
  const Mat<double> g = bilinear_gram(layer);
  Eigen::SelfAdjointEigenSolver<Mat<double>> es(g, Eigen::EigenvaluesOnly);
  const core::Vec<double> lambda = es.eigenvalues().cwiseMax(0.0);  // ascending
  BilinearRank r;
  r.heads = layer.n_heads;
  r.sigma_max = std::sqrt(lambda(lambda.size() - 1));
  r.sigma_min_nonzero = r.sigma_max;
  for (Index i = 0; i < lambda.size(); ++i) {
    const double s = std::sqrt(lambda(i));
    if (s > rel_tol * r.sigma_max) {
      ++r.rank;
      r.sigma_min_nonzero = std::min(r.sigma_min_nonzero, s);
    }
  }
  r.kappa = r.sigma_min_nonzero > 0 ? r.sigma_max / r.sigma_min_nonzero : std::numeric_limits<double>::infinity();
  return r;
}

const char* slice_name(Slice s) {
  switch (s) {
    case Slice::qr: return "qr";
    case Slice::gram: return "gram";
    case Slice::covariance: return "covariance";
  }
  return "?";
}

Slice parse_slice(const std::string& name) {
  for (Slice s : all_slices())
    if (name == slice_name(s)) return s;
  throw std::invalid_argument("unknown canonical slice '" + name + "' (qr, gram, covariance)");
}

std::vector<Slice> all_slices() { return {Slice::qr, Slice::gram, Slice::covariance}; }

namespace {

// C = R_V⁻¹ for the V/O QR slice of one head (Algorithm 1 lines 13–16). [dv, dv]
Mat<double> vo_qr_gauge(const core::AttentionHead<double>& h) {
  const core::ThinQR<double> qr = core::thin_qr_positive(h.W_v);
  return qr.r.triangularView<Eigen::Upper>().solve(Mat<double>::Identity(h.d_v(), h.d_v()));
}

}  // namespace

core::LayerGauge<double> slice_gauge(const core::AttentionLayer<double>& layer, Slice slice, const Mat<double>& x) {
  core::require_layer(layer, "slice_gauge");
  core::LayerGauge<double> g;
  if (slice == Slice::qr) {  // the core's Algorithm 1, read back as a group element
    const core::CanonicalLayer<double> c = core::canonicalize_layer(layer);
    for (Index i = 0; i < layer.n_heads; ++i) {
      const auto k = static_cast<std::size_t>(i);
      g.s.push_back(c.R_q[k].triangularView<Eigen::Upper>().solve(Mat<double>::Identity(layer.d_k(), layer.d_k())));
      g.c.push_back(c.R_v[k].triangularView<Eigen::Upper>().solve(Mat<double>::Identity(layer.d_v(), layer.d_v())));
    }
    g.perm = c.perm;
    return g;
  }
  for (Index i = 0; i < layer.n_heads; ++i) {
    const core::AttentionHead<double> h = core::head(layer, i);
    g.s.push_back(slice == Slice::gram ? core::gram_balance_qk(h).S : core::covariance_balance_qk(h, x).S);
    g.c.push_back(vo_qr_gauge(h));
  }
  g.perm = core::identity_permutation(layer.n_heads);
  g.perm = core::head_order_by_key_norm(core::apply_layer_gauge(layer, g));
  return g;
}

std::vector<HeadMetrics> head_metrics(const core::AttentionLayer<double>& layer, const Mat<double>& x) {
  std::vector<HeadMetrics> out;
  auto kappa_spd = [](const Mat<double>& s) {
    Eigen::SelfAdjointEigenSolver<Mat<double>> es(s, Eigen::EigenvaluesOnly);
    const double lo = es.eigenvalues().minCoeff(), hi = es.eigenvalues().maxCoeff();
    return lo > 0 ? hi / lo : std::numeric_limits<double>::infinity();
  };
  for (Index i = 0; i < layer.n_heads; ++i) {
    const core::AttentionHead<double> h = core::head(layer, i);
    HeadMetrics m;
    const Mat<double> gq = h.W_q.transpose() * h.W_q, gk = h.W_k.transpose() * h.W_k;  // [dk, dk]
    m.key_norm = h.W_k.norm();
    m.v_orthonormality = core::value_orthonormality_error(h);
    m.q_orthonormality = (gq - Mat<double>::Identity(h.d_k(), h.d_k())).norm();
    m.qk_gram_imbalance = (gq - gk).norm() / gq.norm();
    const core::QkCovariances<double> c = core::qk_covariances(h, x);
    m.qk_cov_imbalance = (c.S_Q - c.S_K).norm() / c.S_Q.norm();
    m.kappa_s_q = kappa_spd(c.S_Q);
    m.kappa_s_k = kappa_spd(c.S_K);
    out.push_back(m);
  }
  return out;
}

std::vector<LrmHeadStats> lrm_head_stats(const core::Vec<double>& r_q, const core::Vec<double>& r_k,
                                         const core::Vec<double>& b_q, const core::Vec<double>& b_k, std::int64_t heads) {
  const core::HeadScales<double> s = core::lrm_head_scales(r_q, r_k, heads);
  const core::QkMultipliers<double> fixed = core::gauge_fix(core::QkMultipliers<double>{heads, r_q, r_k, b_q, b_k}).multipliers;
  const Index dk = r_q.size() / heads;
  std::vector<LrmHeadStats> out;
  for (Index i = 0; i < heads; ++i) {
    LrmHeadStats st;
    st.s_q = s.s_q(i);
    st.s_k = s.s_k(i);
    st.product = st.s_q * st.s_k;
    st.log_ratio = std::log(st.s_q / st.s_k);
    const core::Vec<double> lr =
        (fixed.r_q.segment(i * dk, dk).cwiseAbs().array() / fixed.r_k.segment(i * dk, dk).cwiseAbs().array()).log().matrix();
    st.coord_max_after_fix = lr.cwiseAbs().maxCoeff();
    st.coord_rms_after_fix = std::sqrt(lr.squaredNorm() / static_cast<double>(dk));
    out.push_back(st);
  }
  return out;
}

const char* family_name(InvalidFamily f) {
  switch (f) {
    case InvalidFamily::asym_qk: return "asym_qk";
    case InvalidFamily::wrong_inverse: return "wrong_inverse";
    case InvalidFamily::vo_mismatch: return "vo_mismatch";
  }
  return "?";
}

std::vector<InvalidFamily> all_families() {
  return {InvalidFamily::asym_qk, InvalidFamily::wrong_inverse, InvalidFamily::vo_mismatch};
}

Distribution distribution(std::vector<double> v) {
  Distribution d;
  d.n = static_cast<std::int64_t>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {  // numpy 'linear'
    const double pos = p * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  d.min = v.front();
  d.max = v.back();
  d.median = q(0.5);
  d.p90 = q(0.9);
  d.p95 = q(0.95);
  d.p99 = q(0.99);
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  return d;
}

SampleSplit sample_split(std::int64_t seqs, std::int64_t len) {
  if (seqs >= 2) {
    const std::int64_t fit = (seqs + 1) / 2;
    return {fit * len, (seqs - fit) * len};
  }
  return {(len + 1) / 2, len - (len + 1) / 2};
}

}  // namespace gaugelab::gpt2::inspect
