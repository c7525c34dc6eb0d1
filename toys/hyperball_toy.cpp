#include "toys/hyperball_toy.hpp"

#include <algorithm>
#include <cmath>

#include "core/coordinates.hpp"
#include "core/eigen_products.hpp"
#include "core/gauge_fix_gram.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "core/update_hyperball.hpp"
#include "toys/factor_common.hpp"
#include "toys/spec_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

using core::Mat;
using io::Range;

void declare(io::Options& opts, HyperballToyOptions& o) {
  opts.add("m", &o.m, "rows of A", Range::at_least(1))
      .add("n", &o.n, "rows of B", Range::at_least(1))
      .add("r", &o.r, "inner dimension", Range::at_least(1))
      .add("eta", &o.eta, "Hyperball step: ||U||_F = eta * R", Range::positive())
      .add("K", &o.K, "start imbalance: gauge singular values over [1/K, K]", Range::at_least(1))
      .add("steps", &o.steps, "Hyperball steps", Range::at_least(1))
      .add("log-every", &o.log_every, "series sample period in steps", Range::at_least(1))
      .add("seeds", &o.seeds, "independent runs (seed, seed+1, ...)", Range::at_least(1));
  opts.check([&o] {
    if (o.r > std::min(o.m, o.n)) throw io::UsageError("--r must be <= min(--m, --n)");
  });
}

Mat<double> hyperball_retraction_closed_form(const Mat<double>& W, const Mat<double>& G, double eta, double R) {
  const Mat<double> U = (-eta * R / G.norm()) * G;
  const Mat<double> V = W + U;
  return (R / V.norm()) * V;
}

double column_rms_log_ratio(const Mat<double>& A, const Mat<double>& B) {
  double worst = 0;
  for (core::Index j = 0; j < A.cols(); ++j)
    worst = std::max(worst, std::fabs(std::log(A.col(j).norm() / B.col(j).norm())));
  return worst;
}

ToyRun run_hyperball_toy(const HyperballToyOptions& o, std::uint64_t seed) {
  core::Rng rng(seed);
  const core::FactorPair<double> base{core::randn<double>(rng, o.m, o.r, 1.0 / std::sqrt(double(o.m))),   // [m, r]
                                      core::randn<double>(rng, o.n, o.r, 1.0 / std::sqrt(double(o.n)))};  // [n, r]
  core::FactorPair<double> start = core::apply_gauge(base, core::random_gl<double>(rng, o.r, o.K * o.K));
  // The scalar gauge c·I with c² = ‖B‖/‖A‖ equalises the radii: ‖cA‖_F = ‖B/c‖_F.
  const double c = std::sqrt(start.B.norm() / start.A.norm());
  start = core::apply_gauge(start, Mat<double>(c * Mat<double>::Identity(o.r, o.r)));
  const core::FactorPair<double> balanced = core::gram_balance(start).pair;
  Mat<double> Y = core::randn<double>(rng, o.m, o.r) * core::randn<double>(rng, o.n, o.r).transpose();  // [m, n]
  Y *= 0.5 * core::represented(start).norm() / Y.norm();

  core::HyperballOptions hb;
  hb.lr = o.eta;  // radius 0: R = ‖W₀‖_F, fixed at the first step; inner SGD proposes Ũ = G
  const core::RuleOptions rule = hb;
  const double RA = start.A.norm(), RB = start.B.norm();

  // The seed's retraction written out, against the core's first step from the same point.
  const FactorGradients g0 = factor_gradients(start, Y);
  double err_retraction = 0;
  {
    core::PairState<double> st;
    const core::FactorPair<double> one = factor_step(start, Y, rule, rule, nullptr, st);
    err_retraction = std::max(rel_err(one.A, hyperball_retraction_closed_form(start.A, g0.G_A, o.eta, RA)),
                              rel_err(one.B, hyperball_retraction_closed_form(start.B, g0.G_B, o.eta, RB)));
  }
  const double lambda = 0.1;  // any λ: P_T(λW) = 0 for every λ; the value only sets the scale compared against
  const double decay_tangent =
      core::sphere_tangent_projection(start.A, Mat<double>(lambda * start.A)).norm() / (lambda * start.A.norm());

  core::FactorPair<double> p = start, q = balanced;
  core::PairState<double> sp, sq;
  double err_norm = 0, err_trace = 0;
  ToyRun run;
  begin_series(run, {"norm_A", "norm_B", "radius_A", "radius_B", "trace_HA", "trace_HB", "rel_imbalance",
                     "col_rms_log_ratio", "loss", "rel_imbalance_balanced_start", "loss_balanced_start"});
  for (std::int64_t t = 0; t <= o.steps; ++t) {
    const auto gi = core::gram_imbalance(p), gb = core::gram_imbalance(q);
    const double nA = p.A.norm(), nB = p.B.norm();
    err_norm = std::max({err_norm, rel_err(nA, RA), rel_err(nB, RB)});
    err_trace = std::max({err_trace, rel_err(gi.H_A.trace(), RA * RA), rel_err(gi.H_B.trace(), RB * RB)});
    if (t % o.log_every == 0 || t == o.steps)
      push_row(run, t,
               {nA, nB, RA, RB, gi.H_A.trace(), gi.H_B.trace(), gi.relative, column_rms_log_ratio(p.A, p.B),
                half_sq_dist(core::represented(p), Y), gb.relative, half_sq_dist(core::represented(q), Y)});
    if (t == o.steps) break;
    p = factor_step(p, Y, rule, rule, nullptr, sp);
    q = factor_step(q, Y, rule, rule, nullptr, sq);
  }

  const auto gi = core::gram_imbalance(p);
  run.metrics = {{"seed", static_cast<std::int64_t>(seed)},
                 {"radius_A", RA},
                 {"radius_B", RB},
                 {"rel_imbalance_start", core::gram_imbalance(start).relative},
                 {"rel_imbalance_final", gi.relative},
                 {"col_rms_log_ratio_start", column_rms_log_ratio(start.A, start.B)},
                 {"col_rms_log_ratio_final", column_rms_log_ratio(p.A, p.B)},
                 {"loss_start", half_sq_dist(core::represented(start), Y)},
                 {"loss_final", half_sq_dist(core::represented(p), Y)},
                 {"rel_imbalance_balanced_start_final", core::gram_imbalance(q).relative},
                 {"loss_balanced_start_final", half_sq_dist(core::represented(q), Y)},
                 {"max_rel_err_norm", err_norm},
                 {"max_rel_err_trace", err_trace},
                 {"rel_err_retraction", err_retraction},
                 {"decay_tangent_rel", decay_tangent}};
  return run;
}

std::unique_ptr<Toy> make_hyperball_toy() {
  return make_spec_toy<HyperballToyOptions>({"hyperball",
                                 "Seed 003 §5: Hyperball keeps ||A||_F and ||B||_F fixed (closed form beside simulation) but does not "
           "balance the Grams A^T A and B^T B.",
                                 [](const HyperballToyOptions& o) { return o.seeds; },
                                 [](const HyperballToyOptions& o, std::uint64_t seed) { return run_hyperball_toy(o, seed); },
                                 [](const std::vector<ToyRun>& runs) {
                                   return means_and_worst(runs, {"rel_imbalance_start", "rel_imbalance_final", "col_rms_log_ratio_final",
                                                                 "loss_start", "loss_final", "rel_imbalance_balanced_start_final"},
                                                          {"max_rel_err_norm", "max_rel_err_trace", "rel_err_retraction",
                                                           "decay_tangent_rel"});
                                 }});
}

}  // namespace gaugelab::toys
