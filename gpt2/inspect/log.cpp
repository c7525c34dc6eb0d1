#include "gpt2/inspect/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/coordinates.hpp"

namespace gaugelab::gpt2::inspect {

namespace {

using io::Column;
using io::DType;
using u64 = std::uint64_t;

Column f(const char* n) { return {n, DType::f64}; }
Column i(const char* n) { return {n, DType::i64}; }
Column s(const char* n) { return {n, DType::str, 16}; }

std::string e3(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", x);
  return b;
}

double vmin(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
double vmax(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

}  // namespace

InspectLog::InspectLog(const std::string& path, const io::Provenance& prov, bool force, LogShape shape)
    : log_(io::RunLog::create(path, prov, force)), shape_(shape) {
  const auto L = static_cast<u64>(shape.layers), nv = static_cast<u64>(shape.valid_tests),
             ni = static_cast<u64>(shape.invalid_tests);
  log_.declare_table("projections", {i("layer"), i("head"), s("matrix"), f("sigma_min"), f("sigma_max"), f("kappa"), i("rank")});
  log_.declare_table("bilinear_forms", {i("layer"), i("heads"), i("rank"), f("sigma_max"), f("sigma_min_nonzero"), f("kappa")});
  log_.declare_table("valid_transforms", {i("test"), f("score_rel_err_max"), f("attn_rel_err_max"), f("logit_rel_err")});
  log_.declare_table("valid_distribution", {s("quantity"), i("n"), f("min"), f("median"), f("p90"), f("p95"), f("p99"),
                                            f("max"), f("mean")});
  log_.declare_table("invalid_transforms", {s("family"), i("draw"), f("score_rel_err_min"), f("score_rel_err_max"),
                                            f("attn_rel_err_min"), f("attn_rel_err_max"), f("logit_rel_err")});
  log_.declare_table("canonical", {s("slice"), i("layer"), i("head"), i("source_head"), f("key_norm_after"),
                                   f("v_orth_before"), f("v_orth_after"), f("q_orth_before"), f("q_orth_after"),
                                   f("qk_gram_imb_before"), f("qk_gram_imb_after"), f("qk_cov_imb_before"),
                                   f("qk_cov_imb_after"), f("kappa_s_q_before"), f("kappa_s_q_after"),
                                   f("kappa_s_k_before"), f("kappa_s_k_after"), f("qk_cov_imb_after_fit")});
  log_.declare_table("exactness", {s("slice"), i("prompts"), i("prompt_len"), i("generated"), f("mean_abs_logit_diff"),
                                   f("max_abs_logit_diff"), f("greedy_match"), f("token_match")});
  log_.declare_table("lrm_heads", {i("layer"), i("head"), f("s_q"), f("s_k"), f("product"), f("log_ratio"),
                                   f("coord_max_after_fix"), f("coord_rms_after_fix")});
  if (shape.lrm) log_.declare_heads({"s_q", "s_k"}, static_cast<int>(shape.layers), static_cast<int>(shape.heads));
  log_.declare_array("valid_score_rel_err", {nv, L});
  log_.declare_array("valid_attn_rel_err", {nv, L});
  log_.declare_array("valid_logit_rel_err", {nv});
  log_.declare_array("invalid_score_rel_err", {3, ni, L});
  log_.declare_array("invalid_attn_rel_err", {3, ni, L});
  log_.declare_array("invalid_logit_rel_err", {3, ni});
  log_.start();
  invalid_score_.assign(3 * ni * L, std::numeric_limits<double>::quiet_NaN());
  invalid_attn_ = invalid_score_;
  invalid_logit_.assign(3 * ni, std::numeric_limits<double>::quiet_NaN());
}

void InspectLog::projections(std::int64_t layer, const std::vector<HeadSpectra>& heads) {
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const HeadSpectra& hs = heads[h];
    for (auto [name, sp] : {std::pair{"W_Q", hs.q}, std::pair{"W_K", hs.k}, std::pair{"W_V", hs.v}, std::pair{"W_O", hs.o}})
      log_.append_row("projections", {layer, static_cast<std::int64_t>(h), std::string(name), sp.sigma_min, sp.sigma_max,
                                      sp.kappa, sp.rank});
    spectra_.push_back(hs);
  }
}

void InspectLog::bilinear(std::int64_t layer, const BilinearRank& r) {
  log_.append_row("bilinear_forms", {layer, r.heads, r.rank, r.sigma_max, r.sigma_min_nonzero, r.kappa});
  bilinear_.push_back(r);
}

void InspectLog::valid(std::int64_t test, const TransformErrors& e) {
  valid_score_.insert(valid_score_.end(), e.score.begin(), e.score.end());
  valid_attn_.insert(valid_attn_.end(), e.attn.begin(), e.attn.end());
  valid_logit_.push_back(e.logit);
  log_.append_row("valid_transforms", {test, vmax(e.score), vmax(e.attn), e.logit});
}

void InspectLog::invalid(InvalidFamily fam, std::int64_t draw, const TransformErrors& e) {
  const auto fi = static_cast<std::size_t>(fam), L = static_cast<std::size_t>(shape_.layers);
  const std::size_t row = fi * static_cast<std::size_t>(shape_.invalid_tests) + static_cast<std::size_t>(draw);
  std::copy(e.score.begin(), e.score.end(), invalid_score_.begin() + static_cast<std::ptrdiff_t>(row * L));
  std::copy(e.attn.begin(), e.attn.end(), invalid_attn_.begin() + static_cast<std::ptrdiff_t>(row * L));
  invalid_logit_[row] = e.logit;
  log_.append_row("invalid_transforms", {std::string(family_name(fam)), draw, vmin(e.score), vmax(e.score), vmin(e.attn),
                                         vmax(e.attn), e.logit});
}

void InspectLog::canonical(Slice sl, std::int64_t layer, const core::Permutation& perm,
                           const std::vector<HeadMetrics>& before, const std::vector<HeadMetrics>& after,
                           const std::vector<HeadMetrics>& after_fit) {
  SliceSums& sum = slices_[static_cast<std::size_t>(sl)];
  for (std::size_t j = 0; j < after.size(); ++j) {
    const HeadMetrics& b = before[static_cast<std::size_t>(perm[j])];
    const HeadMetrics& a = after[j];
    log_.append_row("canonical", {std::string(slice_name(sl)), layer, static_cast<std::int64_t>(j), perm[j], a.key_norm,
                                  b.v_orthonormality, a.v_orthonormality, b.q_orthonormality, a.q_orthonormality,
                                  b.qk_gram_imbalance, a.qk_gram_imbalance, b.qk_cov_imbalance, a.qk_cov_imbalance,
                                  b.kappa_s_q, a.kappa_s_q, b.kappa_s_k, a.kappa_s_k, after_fit[j].qk_cov_imbalance});
    sum.v_before += b.v_orthonormality;
    sum.v_after += a.v_orthonormality;
    sum.cov_before += b.qk_cov_imbalance;
    sum.cov_after += a.qk_cov_imbalance;
    sum.gram_before += b.qk_gram_imbalance;
    sum.gram_after += a.qk_gram_imbalance;
    sum.kq_before += b.kappa_s_q;
    sum.kq_after += a.kappa_s_q;
    sum.kk_before += b.kappa_s_k;
    sum.kk_after += a.kappa_s_k;
    ++sum.n;
  }
}

void InspectLog::exactness(Slice sl, const InspectOptions& o, const Exactness& e) {
  slices_[static_cast<std::size_t>(sl)].exact = e;
  log_.append_row("exactness", {std::string(slice_name(sl)), o.prompts, o.prompt_len, o.generate, e.mean_abs_logit_diff,
                                e.max_abs_logit_diff, e.greedy_match, e.token_match});
}

void InspectLog::lrm(std::int64_t layer, const std::vector<LrmHeadStats>& heads) {
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const LrmHeadStats& x = heads[h];
    log_.append_row("lrm_heads", {layer, static_cast<std::int64_t>(h), x.s_q, x.s_k, x.product, x.log_ratio,
                                  x.coord_max_after_fix, x.coord_rms_after_fix});
    lrm_.push_back(x);
  }
}

InspectResult InspectLog::finish(const GaugeCounts& counts, std::int64_t parameters, const InspectOptions& o,
                                 double seconds) {
  const std::int64_t L = shape_.layers, H = shape_.heads;
  log_.write_array("valid_score_rel_err", valid_score_.data(), valid_score_.size());
  log_.write_array("valid_attn_rel_err", valid_attn_.data(), valid_attn_.size());
  log_.write_array("valid_logit_rel_err", valid_logit_.data(), valid_logit_.size());
  log_.write_array("invalid_score_rel_err", invalid_score_.data(), invalid_score_.size());
  log_.write_array("invalid_attn_rel_err", invalid_attn_.data(), invalid_attn_.size());
  log_.write_array("invalid_logit_rel_err", invalid_logit_.data(), invalid_logit_.size());
  const Distribution dscore = distribution(valid_score_), dattn = distribution(valid_attn_), dlogit = distribution(valid_logit_);
  for (auto [name, d] : {std::pair{"score", dscore}, std::pair{"attn", dattn}, std::pair{"logit", dlogit}})
    log_.append_row("valid_distribution", {std::string(name), d.n, d.min, d.median, d.p90, d.p95, d.p99, d.max, d.mean});
  if (shape_.lrm && !lrm_.empty()) {
    core::Mat<double> sq(L, H), sk(L, H);
    for (std::int64_t k = 0; k < L * H; ++k) {
      sq(k / H, k % H) = lrm_[static_cast<std::size_t>(k)].s_q;
      sk(k / H, k % H) = lrm_[static_cast<std::size_t>(k)].s_k;
    }
    log_.append_heads(0, {sq, sk});
  }

  InspectResult r;
  r.layers = L;
  r.heads = H;
  r.d_k = shape_.d_k;
  r.d_v = shape_.d_v;
  r.gauge_dim_per_layer = counts.per_layer;
  r.gauge_dim_total = counts.total;
  for (const BilinearRank& b : bilinear_) r.a7_full_rank_layers += b.rank == b.heads ? 1 : 0;
  r.valid_logit_rel_err_max = dlogit.max;
  r.valid_attn_rel_err_max = dattn.max;
  r.invalid_logit_rel_err_min = vmin(invalid_logit_);
  const SliceSums& chosen = slices_[static_cast<std::size_t>(parse_slice(o.canonical))];
  r.canonical_max_abs_logit_diff = chosen.exact.max_abs_logit_diff;
  r.canonical_greedy_match = chosen.exact.greedy_match;

  double min_sig_bil = std::numeric_limits<double>::infinity(), max_kappa_bil = 0;
  for (const BilinearRank& b : bilinear_) {
    min_sig_bil = std::min(min_sig_bil, b.sigma_min_nonzero);
    max_kappa_bil = std::max(max_kappa_bil, b.kappa);
  }
  const core::DriftStats drift = [&] {  // seed 000 eq. 3 over every layer and head
    std::vector<core::HeadScales<double>> layers;
    for (std::size_t k = 0; k < lrm_.size(); ++k) {
      if (k % static_cast<std::size_t>(H) == 0) layers.push_back({core::Vec<double>(H), core::Vec<double>(H)});
      layers.back().s_q(static_cast<core::Index>(k % static_cast<std::size_t>(H))) = lrm_[k].s_q;
      layers.back().s_k(static_cast<core::Index>(k % static_cast<std::size_t>(H))) = lrm_[k].s_k;
    }
    return core::lrm_drift(layers);
  }();
  double coord_after = 0;
  for (const LrmHeadStats& x : lrm_) coord_after = std::max(coord_after, x.coord_max_after_fix);

  log_.set_summary("layers", L);
  log_.set_summary("heads", H);
  log_.set_summary("d_k", r.d_k);
  log_.set_summary("d_v", r.d_v);
  log_.set_summary("parameters", parameters);
  log_.set_summary("gauge_dim_per_layer", counts.per_layer);
  log_.set_summary("gauge_dim_total", counts.total);
  log_.set_summary("slice_removed_per_layer", counts.removed_per_layer);
  log_.set_summary("slice_removed_total", counts.removed_total);
  log_.set_summary("orthogonal_residual_per_layer", counts.residual_per_layer);
  log_.set_summary("orthogonal_residual_total", counts.residual_total);
  log_.set_summary("gauge_fraction_of_parameters", static_cast<double>(counts.total) / static_cast<double>(parameters));
  log_.set_summary("a7_full_rank_layers", r.a7_full_rank_layers);
  log_.set_summary("valid_logit_rel_err_max", r.valid_logit_rel_err_max);
  log_.set_summary("valid_attn_rel_err_max", r.valid_attn_rel_err_max);
  log_.set_summary("valid_score_rel_err_max", dscore.max);
  log_.set_summary("invalid_logit_rel_err_min", r.invalid_logit_rel_err_min);
  // vo_mismatch leaves the scores alone by construction: the score minimum is over the two Q/K families.
  log_.set_summary("invalid_score_rel_err_min",
                   vmin(std::vector<double>(invalid_score_.begin(),
                                            invalid_score_.begin() + static_cast<std::ptrdiff_t>(invalid_score_.size() * 2 / 3))));
  log_.set_summary("canonical_slice", o.canonical);
  log_.set_summary("canonical_max_abs_logit_diff", r.canonical_max_abs_logit_diff);
  log_.set_summary("canonical_greedy_match", r.canonical_greedy_match);
  log_.set_summary("lrm", static_cast<std::int64_t>(lrm_.empty() ? 0 : 1));
  if (!lrm_.empty()) {
    log_.set_summary("lrm_drift_max", drift.max);
    log_.set_summary("lrm_drift_mean", drift.mean);
    log_.set_summary("lrm_coord_imbalance_after_fix_max", coord_after);
  }
  log_.set_summary("seconds", seconds);
  log_.close();

  // One screen.
  std::ostream& out = std::cout;
  out << "Table 3    projections (" << L * H << " heads): σ_min range, mean κ\n";
  for (int m = 0; m < 4; ++m) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0, kap = 0;
    for (const HeadSpectra& hs : spectra_) {
      const Spectrum& sp = m == 0 ? hs.q : m == 1 ? hs.k : m == 2 ? hs.v : hs.o;
      lo = std::min(lo, sp.sigma_min);
      hi = std::max(hi, sp.sigma_min);
      kap += sp.kappa / static_cast<double>(spectra_.size());
    }
    out << "           " << (m == 0 ? "W_Q" : m == 1 ? "W_K" : m == 2 ? "W_V" : "W_O") << "  [" << e3(lo) << ", " << e3(hi)
        << "]  " << e3(kap) << "\n";
  }
  out << "Table 4    A7: " << r.a7_full_rank_layers << "/" << L << " layers full rank (tol " << e3(o.rank_tol)
      << "·σ_max); min σ_min " << e3(min_sig_bil) << ", max κ " << e3(max_kappa_bil) << "\n";
  out << "Table 5-6  valid (" << o.valid_tests << " tests, δ " << o.perturbation << ", " << word(o.precision)
      << "): median / p99 / max\n";
  for (auto [name, d] : {std::pair{"scores ", dscore}, std::pair{"attn out", dattn}, std::pair{"logits ", dlogit}})
    out << "           " << name << "  " << e3(d.median) << " / " << e3(d.p99) << " / " << e3(d.max) << "\n";
  out << "Table 7    invalid (κ " << o.invalid_kappa << ", " << o.invalid_tests << " draws), min over draws: scores | attn | logits\n";
  const auto ni = static_cast<std::size_t>(o.invalid_tests), Ls = static_cast<std::size_t>(L);
  for (InvalidFamily fam : all_families()) {
    const auto fi = static_cast<std::size_t>(fam);
    auto slice_min = [&](const std::vector<double>& v, std::size_t width) {
      return vmin(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(fi * ni * width),
                                      v.begin() + static_cast<std::ptrdiff_t>((fi + 1) * ni * width)));
    };
    out << "           " << family_name(fam) << "  " << e3(slice_min(invalid_score_, Ls)) << " | "
        << e3(slice_min(invalid_attn_, Ls)) << " | " << e3(slice_min(invalid_logit_, 1)) << "\n";
  }
  out << "Table 8    mean over heads, before -> after: ‖W_VᵀW_V−I‖ | Q/K cov. imbalance | κ(S_Q) | κ(S_K)\n";
  for (Slice sl : all_slices()) {
    const SliceSums& x = slices_[static_cast<std::size_t>(sl)];
    const double n = static_cast<double>(std::max<std::int64_t>(x.n, 1));
    out << "           " << slice_name(sl) << "  " << e3(x.v_before / n) << "->" << e3(x.v_after / n) << " | "
        << e3(x.cov_before / n) << "->" << e3(x.cov_after / n) << " | " << e3(x.kq_before / n) << "->" << e3(x.kq_after / n)
        << " | " << e3(x.kk_before / n) << "->" << e3(x.kk_after / n) << "\n";
  }
  out << "Table 9    " << o.prompts << " prompts x " << o.prompt_len << ", " << o.generate
      << " greedy tokens: mean | max |Δlogit|, greedy match\n";
  for (Slice sl : all_slices()) {
    const Exactness& x = slices_[static_cast<std::size_t>(sl)].exact;
    out << "           " << slice_name(sl) << "  " << e3(x.mean_abs_logit_diff) << " | " << e3(x.max_abs_logit_diff) << ", "
        << 100 * x.greedy_match << " %\n";
  }
  out << "Cor. 4     gauge dim " << counts.per_layer << "/layer, " << counts.total << " total ("
      << e3(100.0 * static_cast<double>(counts.total) / static_cast<double>(parameters)) << " % of " << parameters
      << " parameters); slice removes " << counts.removed_total << ", orthogonal residual " << counts.residual_total << "\n";
  if (!lrm_.empty())
    out << "LRM        drift max " << e3(drift.max) << ", mean " << e3(drift.mean)
        << "; per-coordinate |log r_Q/r_K| left by GaugeFix, max " << e3(coord_after) << "\n";
  else
    out << "LRM        no Q/K row or scalar multipliers in this model\n";
  out << "log        " << o.run.out << " (" << e3(seconds) << " s)\n";
  return r;
}

}  // namespace gaugelab::gpt2::inspect
