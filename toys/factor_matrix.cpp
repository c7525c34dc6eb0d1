#include "toys/factor_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/eigen_products.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "toys/factor_common.hpp"
#include "toys/spec_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

using core::Mat;
using io::Range;

void declare(io::Options& opts, FactorMatrixOptions& o) {
  opts.add("m", &o.m, "rows of M = AB^T", Range::at_least(1))
      .add("n", &o.n, "columns of M", Range::at_least(1))
      .add("r", &o.r, "inner dimension (rank of the target)", Range::at_least(1))
      .add("eta", &o.eta, "GD learning rate", Range::positive())
      .add("eps", &o.eps, "start at M = (1 - eps) Y", Range{0.0, 1.0, true, true})
      .add("K", &o.K, "headline gauge: singular values over [1/K, K]", Range::at_least(1))
      .add("K-min", &o.K_min, "gauge sweep: first K", Range::at_least(1))
      .add("K-max", &o.K_max, "gauge sweep: last K", Range::at_least(1))
      .add("K-points", &o.K_points, "gauge sweep: log-spaced points", Range::at_least(1))
      .add("gauges", &o.gauges, "random gauges per K point", Range::at_least(1))
      .add("solve", &o.solve, "Gram solve of the opposite-Gram correction", {"qr", "cholesky"})
      .add("seeds", &o.seeds, "independent targets and gauge draws (seed, seed+1, ...)", Range::at_least(1));
  opts.check([&o] {
    if (o.r > std::min(o.m, o.n)) throw io::UsageError("--r must be <= min(--m, --n): the target has rank r");
    if (!(o.K_min <= o.K_max)) throw io::UsageError("--K-min must be <= --K-max");
  });
}

Mat<double> factor_gd_closed_form(const Mat<double>& A, const Mat<double>& B, const Mat<double>& Y, double eta) {
  const Mat<double> M = A * B.transpose();  // [m, n]
  const Mat<double> G = M - Y;              // [m, n]
  // (A − ηGB)(B − ηGᵀA)ᵀ = M − η(G·BBᵀ + AAᵀ·G) + η²·G·BAᵀ·G
  return M - eta * (G * (B * B.transpose()) + (A * A.transpose()) * G) + eta * eta * G * (B * A.transpose()) * G;
}

Mat<double> factor_quotient_closed_form(const Mat<double>& M, const Mat<double>& Y, int r, double eta) {
  Eigen::JacobiSVD<Mat<double>> svd(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const Mat<double> U = svd.matrixU().leftCols(r);  // [m, r] column space of M
  const Mat<double> V = svd.matrixV().leftCols(r);  // [n, r] row space of M
  const core::Vec<double> s = svd.singularValues().head(r);
  const Mat<double> pinv = V * s.cwiseInverse().asDiagonal() * U.transpose();  // [n, m] M⁺
  const Mat<double> G = M - Y;                                                   // [m, n]
  return M - eta * (G * (V * V.transpose()) + (U * U.transpose()) * G) + eta * eta * G * pinv * G;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t k = v.size();
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

struct GaugeOutcome {
  Mat<double> plain_sim, plain_cf, quot_sim;  // [m, n] M_after each (quot_sim NaN where the Gram solve failed)
  double factor_scale = 0;  // max of ‖A‖_F‖B‖_F before and after either step: the representative's round-off scale
};

constexpr double kUnitRoundoff = 0x1p-53;  // u of IEEE double

/// Round-off-aware agreement of one simulated M_after with its closed form: the larger of
/// ‖ΔM‖/(u·s) and |Δℓ|/(u·s·‖M_cf − Y‖), s = ‖A‖_F‖B‖_F. M = ABᵀ formed from factors of size s in
/// double carries an error of order u·s (r products summed per entry, |A||B|ᵀ ≤ ‖A‖_F‖B‖_F), which
/// for a gauge image with cond(S) = K² exceeds 1e-12·‖M‖ once K² ≳ 1e4; below that this is a plain
/// 1e-12-relative check, above it the closed form is checked at the representative's own floor.
double over_floor(const Mat<double>& sim, const Mat<double>& cf, const Mat<double>& Y, double scale) {
  const double floor_m = kUnitRoundoff * scale;
  const double dm = (sim - cf).norm() / floor_m;
  const double dl = std::fabs(half_sq_dist(sim, Y) - half_sq_dist(cf, Y)) / (floor_m * (cf - Y).norm());
  return std::max(dm, dl);
}

}  // namespace

ToyRun run_factor_matrix(const FactorMatrixOptions& o, std::uint64_t seed) {
  core::Rng rng(seed);
  Mat<double> Y = core::randn<double>(rng, o.m, o.r) * core::randn<double>(rng, o.n, o.r).transpose();  // [m, n]
  Y /= Y.norm();
  const Mat<double> M0 = (1.0 - o.eps) * Y;  // [m, n]
  Eigen::JacobiSVD<Mat<double>> svd(M0, Eigen::ComputeThinU | Eigen::ComputeThinV);
  const core::Vec<double> root = svd.singularValues().head(o.r).cwiseSqrt();
  // Balanced representative: both factors carry Gram diag(σ) — the Gram-balance fix of DESIGN §3.
  const core::FactorPair<double> base{svd.matrixU().leftCols(o.r) * root.asDiagonal(),   // [m, r]
                                      svd.matrixV().leftCols(o.r) * root.asDiagonal()};  // [n, r]

  const core::RuleOptions sgd = core::SgdOptions{o.eta, 0.0};
  const core::QuotientOptions q{core::QuotientMode::full, 0.0, core::parse_gram_solve(o.solve)};
  const Mat<double> quot_cf = factor_quotient_closed_form(M0, Y, o.r, o.eta);  // one answer for every representative
  const double loss_quot_cf = half_sq_dist(quot_cf, Y);
  auto step_from = [&](const core::FactorPair<double>& p) {
    core::PairState<double> s1, s2;
    const core::FactorPair<double> plain = factor_step(p, Y, sgd, sgd, nullptr, s1);
    GaugeOutcome g{core::represented(plain), factor_gd_closed_form(p.A, p.B, Y, o.eta), {}, 0.0};
    g.factor_scale = std::max(p.A.norm() * p.B.norm(), plain.A.norm() * plain.B.norm());
    try {
      const core::FactorPair<double> quot = factor_step(p, Y, sgd, sgd, &q, s2);
      g.quot_sim = core::represented(quot);
      g.factor_scale = std::max(g.factor_scale, quot.A.norm() * quot.B.norm());
    } catch (const std::domain_error&) {  // Cholesky of a numerically singular Gram (--solve cholesky, huge K)
      g.quot_sim = Mat<double>::Constant(o.m, o.n, std::numeric_limits<double>::quiet_NaN());
    }
    return g;
  };
  const GaugeOutcome at_base = step_from(base);
  const double motion_base = (at_base.plain_sim - M0).norm(), motion_quot = (quot_cf - M0).norm();

  // NaN-propagating max: a failed solve must show in the agreement metrics, not vanish from them.
  auto worse = [](double a, double b) { return std::isnan(b) || b > a ? b : a; };
  double err_m_plain = 0, err_m_quot = 0, floor_ratio = 0;
  auto track = [&](const GaugeOutcome& g) {
    err_m_plain = worse(err_m_plain, rel_err(g.plain_sim, g.plain_cf));
    err_m_quot = worse(err_m_quot, rel_err(g.quot_sim, quot_cf));
    floor_ratio = worse(floor_ratio, over_floor(g.plain_sim, g.plain_cf, Y, g.factor_scale));
    floor_ratio = worse(floor_ratio, over_floor(g.quot_sim, quot_cf, Y, g.factor_scale));
  };
  track(at_base);

  // Headline gauge first, so its draw does not depend on the sweep settings.
  const Mat<double> S_head = core::random_gl<double>(rng, o.r, o.K * o.K);  // [r, r]
  const GaugeOutcome head = step_from(core::apply_gauge(base, S_head));
  track(head);

  ToyRun run;
  begin_series(run, {"K", "cond_S", "loss_plain_min", "loss_plain_median", "loss_plain_max", "loss_plain_closed_max",
                     "loss_quotient_min", "loss_quotient_max", "loss_quotient_closed", "motion_spread_plain",
                     "motion_spread_quotient", "motion_err_quotient_closed", "rel_err_M_plain", "rel_err_M_quotient",
                     "roundoff_floor_M"});
  const auto grid = log_grid(o.K_min, o.K_max, o.K_points, "--K-min/--K-max");
  for (size_t i = 0; i < grid.size(); ++i) {
    const double K = grid[i];
    std::vector<double> lp, lpc, lq;
    double spread_p = 0, spread_q = 0, dist_q = 0, ep = 0, eq = 0, fl = 0;
    for (int g = 0; g < o.gauges; ++g) {
      const Mat<double> S = core::random_gl<double>(rng, o.r, K * K);  // [r, r]
      const GaugeOutcome out = step_from(core::apply_gauge(base, S));
      track(out);
      lp.push_back(half_sq_dist(out.plain_sim, Y));
      lpc.push_back(half_sq_dist(out.plain_cf, Y));
      lq.push_back(half_sq_dist(out.quot_sim, Y));
      spread_p = std::max(spread_p, (out.plain_sim - at_base.plain_sim).norm() / motion_base);
      // Both spreads against the same step simulated from the balanced representative: a spread over gauges, not
      // a distance from the closed form, which carries an offset common to every gauge (the balanced pair's own
      // distance from it, logged as motion_err_quotient_closed_balanced); dist_q keeps that distance.
      spread_q = worse(spread_q, (out.quot_sim - at_base.quot_sim).norm() / motion_quot);
      dist_q = worse(dist_q, (out.quot_sim - quot_cf).norm() / motion_quot);
      ep = worse(ep, rel_err(out.plain_sim, out.plain_cf));
      eq = worse(eq, rel_err(out.quot_sim, quot_cf));
      fl = std::max(fl, kUnitRoundoff * out.factor_scale / M0.norm());
    }
    push_row(run, static_cast<std::int64_t>(i),
             {K, K * K, *std::min_element(lp.begin(), lp.end()), median(lp), max_of(lp), max_of(lpc),
              *std::min_element(lq.begin(), lq.end()), max_of(lq), loss_quot_cf, spread_p, spread_q, dist_q, ep, eq, fl});
  }

  run.metrics = {{"seed", static_cast<std::int64_t>(seed)},
                 {"loss_before", half_sq_dist(M0, Y)},
                 {"loss_after_balanced", half_sq_dist(at_base.plain_sim, Y)},
                 {"loss_after_plain_closed", half_sq_dist(head.plain_cf, Y)},
                 {"loss_after_plain_sim", half_sq_dist(head.plain_sim, Y)},
                 {"loss_after_quotient_closed", loss_quot_cf},
                 {"loss_after_quotient_sim", half_sq_dist(head.quot_sim, Y)},
                 {"motion_spread_plain", (head.plain_sim - at_base.plain_sim).norm() / motion_base},
                 {"motion_spread_quotient", (head.quot_sim - at_base.quot_sim).norm() / motion_quot},
                 {"motion_err_quotient_closed", (head.quot_sim - quot_cf).norm() / motion_quot},
                 // the part of every gauge's closed-form distance that the gauge does not make: the balanced pair's own
                 {"motion_err_quotient_closed_balanced", (at_base.quot_sim - quot_cf).norm() / motion_quot},
                 {"rel_err_M_plain", rel_err(head.plain_sim, head.plain_cf)},
                 {"rel_err_M_quotient", rel_err(head.quot_sim, quot_cf)},
                 {"rel_err_loss_plain", rel_err(half_sq_dist(head.plain_sim, Y), half_sq_dist(head.plain_cf, Y))},
                 {"rel_err_loss_quotient", rel_err(half_sq_dist(head.quot_sim, Y), loss_quot_cf)},
                 {"max_rel_err_M_plain", err_m_plain},
                 {"max_rel_err_M_quotient", err_m_quot},
                 {"max_err_over_roundoff", floor_ratio}};
  return run;
}

std::unique_ptr<Toy> make_factor_matrix_toy() {
  return make_spec_toy<FactorMatrixOptions>({"factor-matrix",
                                 "Seed 003 §3: one GD step on ½‖AB^T − Y‖² from gauge images (AS, BS^-T) of growing condition number, "
           "plain and with the opposite-Gram correction, closed form beside simulation.",
                                 [](const FactorMatrixOptions& o) { return o.seeds; },
                                 [](const FactorMatrixOptions& o, std::uint64_t seed) { return run_factor_matrix(o, seed); },
                                 [](const std::vector<ToyRun>& runs) {
                                   return means_and_worst(runs, {"loss_after_balanced", "loss_after_plain_sim", "loss_after_quotient_sim"},
                                                          {"motion_spread_plain", "motion_spread_quotient",
                                                           "motion_err_quotient_closed",
                                                           "motion_err_quotient_closed_balanced", "rel_err_M_plain",
                                                           "rel_err_M_quotient", "rel_err_loss_plain", "rel_err_loss_quotient",
                                                           "max_rel_err_M_plain", "max_rel_err_M_quotient", "max_err_over_roundoff"},
                                                          "_max");
                                 }});
}

}  // namespace gaugelab::toys
