#include "toys/noise_wd.hpp"

#include <algorithm>
#include <cmath>

#include "core/eigen_products.hpp"
#include "core/lrm_gauge.hpp"
#include "core/random.hpp"
#include "core/update_rules.hpp"
#include "toys/factor_common.hpp"
#include "toys/spec_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

using core::Mat;
using core::Vec;
using io::Range;

void declare(io::Options& opts, NoiseWdOptions& o) {
  opts.add("m", &o.m, "rows of W", Range::at_least(1))
      .add("n", &o.n, "columns of W", Range::at_least(1))
      .add("eta", &o.eta, "learning rate of every parameter", Range::positive())
      .add("lambda", &o.lambda, "decoupled weight decay of the matrix", Range::positive())
      .add("lambda-mult", &o.lambda_mult, "decoupled weight decay of the multipliers", Range::non_negative())
      .add("sigma", &o.sigma, "gradient-noise std per entry", Range::positive())
      .add("grid-factors", &o.grid_factors, "equilibrium grid: (eta f, lambda/f) and (eta f, lambda f)", Range::positive())
      .add("burn-in", &o.burn_in, "equilibrium: relaxation times 1/(eta lambda) discarded", Range::non_negative())
      .add("window", &o.window, "equilibrium: relaxation times averaged", Range::positive())
      .add("target-norm", &o.target_norm, "Frobenius norm of the regression target (series)", Range::positive())
      .add("target-grid", &o.target_grid, "further target norms (final values in /arrays/tg_*)", Range::positive())
      .add("target-row-spread", &o.target_row_spread, "target row scales over [1/a, a]", Range::at_least(1))
      .add("steps", &o.steps, "multiplier experiment: AdamW steps", Range::at_least(1))
      .add("log-every", &o.log_every, "multiplier experiment: series sample period", Range::at_least(1))
      .add("final-fraction", &o.final_fraction, "final values average this last fraction of steps", Range::unit_open_closed())
      .add("seeds", &o.seeds, "independent runs (seed, seed+1, ...)", Range::at_least(1));
  opts.check([&o] {
    auto shrink_ok = [&o](double f) { return o.eta * f * o.lambda * std::max(f, 1.0 / f) < 1.0; };
    if (!(o.eta * o.lambda < 1.0) || !(o.eta * o.lambda_mult < 1.0))
      throw io::UsageError("--eta * --lambda and --eta * --lambda-mult must be < 1");
    for (double f : o.grid_factors)
      if (!shrink_ok(f)) throw io::UsageError("--grid-factors: eta*f * lambda*f must stay < 1 for every f");
  });
}

double sgd_noise_second_moment(double eta, double lambda, double sigma, double mn, double t) {
  const double rho2 = (1.0 - eta * lambda) * (1.0 - eta * lambda);
  return eta * eta * sigma * sigma * mn * (1.0 - std::pow(rho2, t)) / (1.0 - rho2);
}

double adamw_noise_second_moment_estimate(double eta, double lambda, double mn) { return eta * mn / (2.0 * lambda); }

LrmGradients lrm_gradients(const Vec<double>& r, const Mat<double>& Wbar, const Vec<double>& c, const Mat<double>& G) {
  const Mat<double> GW = G.cwiseProduct(Wbar);  // [m, n]
  return {r.asDiagonal() * G * c.asDiagonal(), GW * c, GW.transpose() * r};
}

namespace {

core::AdamWOptions adamw(double lr, double wd) {
  core::AdamWOptions a;  // torch defaults for β₁, β₂, ε
  a.lr = lr;
  a.weight_decay = wd;
  return a;
}

/// One core step of `rule` on W with gradient G (shrink-plus-increment).
void step(const core::RuleOptions& rule, Mat<double>& W, const Mat<double>& G, core::RuleState<double>& st) {
  core::apply_step(W, core::propose(rule, W, G, st));
}

struct EqPoint {
  double eta, lambda, sgd_norm, sgd_closed, sgd_se_rel, adamw_norm, adamw_estimate;
};

EqPoint equilibrium(double eta, double lambda, const NoiseWdOptions& o, core::Rng& rng) {
  const double mn = double(o.m) * o.n, relax = 1.0 / (eta * lambda);
  const auto burn = static_cast<std::int64_t>(std::ceil(o.burn_in * relax));
  const auto win = static_cast<std::int64_t>(std::ceil(o.window * relax));
  auto measure = [&](const core::RuleOptions& rule, double* closed) {
    Mat<double> W = Mat<double>::Zero(o.m, o.n);  // [m, n]
    core::RuleState<double> st;
    double acc = 0, acc_cf = 0;
    for (std::int64_t t = 1; t <= burn + win; ++t) {
      step(rule, W, core::randn<double>(rng, o.m, o.n, o.sigma), st);
      if (t <= burn) continue;
      acc += W.squaredNorm();
      if (closed) acc_cf += sgd_noise_second_moment(eta, lambda, o.sigma, mn, double(t));
    }
    if (closed) *closed = std::sqrt(acc_cf / double(win));
    return std::sqrt(acc / double(win));
  };
  EqPoint p{eta, lambda, 0, 0, 0, 0, 0};
  p.sgd_norm = measure(core::SgdOptions{eta, lambda}, &p.sgd_closed);
  const double rho2 = (1.0 - eta * lambda) * (1.0 - eta * lambda);
  // Standard error of the window mean of ‖W‖² relative to its mean: mn independent AR(1) entries,
  // Var(w²) = 2E[w²]², autocorrelation of w² is ρ^{2|k|}, so Var(mean) = 2E²(1 + ρ²)/((1 − ρ²)·T·mn).
  p.sgd_se_rel = std::sqrt(2.0 * (1.0 + rho2) / ((1.0 - rho2) * double(win) * mn));
  p.adamw_norm = measure(adamw(eta, lambda), nullptr);
  p.adamw_estimate = std::sqrt(adamw_noise_second_moment_estimate(eta, lambda, mn));
  return p;
}

/// Least-squares fit log y = a + b·log(η/λ) + c·log(ηλ): the claim is b = ½, c = 0.
/// NaN for fewer than 3 points (no fit).
std::pair<double, double> scaling_exponents(const std::vector<EqPoint>& pts, double EqPoint::*field) {
  if (pts.size() < 3) return {std::nan(""), std::nan("")};
  Mat<double> X(pts.size(), 3);  // [points, 3]
  Vec<double> y(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    X.row(i) << 1.0, std::log(pts[i].eta / pts[i].lambda), std::log(pts[i].eta * pts[i].lambda);
    y(i) = std::log(pts[i].*field);
  }
  const Vec<double> coef = X.colPivHouseholderQr().solve(y);
  return {coef(1), coef(2)};
}

double log_row_norm_corr(const Mat<double>& W, const Mat<double>& target) {
  const Vec<double> a = W.rowwise().norm().array().log(), b = target.rowwise().norm().array().log();
  const Vec<double> da = a.array() - a.mean(), db = b.array() - b.mean();
  return da.dot(db) / (da.norm() * db.norm());
}

/// Final values (averages over the last final_fraction of steps) of one multiplier experiment.
struct MultiplierOutcome {
  double plain_norm, plain_loss, scalar_bar_norm, scalar_eff_norm, scalar_s, scalar_loss, vector_bar_norm,
      vector_eff_norm, vector_loss, plain_row_corr, vector_row_corr;
};

/// Trains the three parameterisations on one target of norm `target_norm`; logs the trajectories
/// into `series` when given.
MultiplierOutcome train_multipliers(const NoiseWdOptions& o, double target_norm, core::Rng& rng, ToyRun* series) {
  Vec<double> row_scale(o.m);
  for (int i = 0; i < o.m; ++i) row_scale(i) = std::exp(core::uniform(rng, -1.0, 1.0) * std::log(o.target_row_spread));
  Mat<double> target = row_scale.asDiagonal() * core::randn<double>(rng, o.m, o.n);  // [m, n]
  target *= target_norm / target.norm();
  const Mat<double> W0 = core::randn<double>(rng, o.m, o.n, 1.0 / std::sqrt(double(o.n)));  // [m, n] shared init

  const core::RuleOptions mat_rule = adamw(o.eta, o.lambda), mult_rule = adamw(o.eta, o.lambda_mult);
  Mat<double> W = W0, Ws = W0, Wv = W0;  // plain, scalar's W̄, vector's W̄
  Mat<double> s = Mat<double>::Ones(1, 1), r = Mat<double>::Ones(o.m, 1), c = Mat<double>::Ones(o.n, 1);
  core::RuleState<double> st_w, st_ws, st_s, st_wv, st_r, st_c;
  auto eff_vector = [&] { return core::effective_weight<double>(r.col(0), Wv, c.col(0)); };

  if (series)
    begin_series(*series, {"plain_norm", "plain_loss", "scalar_bar_norm", "scalar_eff_norm", "scalar_s", "scalar_loss",
                           "vector_bar_norm", "vector_eff_norm", "vector_r_rms", "vector_c_rms", "vector_loss"});
  const auto final_from = static_cast<std::int64_t>(std::floor((1.0 - o.final_fraction) * double(o.steps)));
  // Σ over the final steps of ‖W‖², ℓ, ‖W̄_s‖², ‖W_s,eff‖², s, ℓ_s, ‖W̄_v‖², ‖W_v,eff‖², ℓ_v
  double fin[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  std::int64_t fin_n = 0;
  for (std::int64_t t = 0; t <= o.steps; ++t) {
    const Mat<double> We_s = s(0, 0) * Ws, We_v = eff_vector();
    const double lp = half_sq_dist(W, target), ls = half_sq_dist(We_s, target), lv = half_sq_dist(We_v, target);
    if (series && (t % o.log_every == 0 || t == o.steps))
      push_row(*series, t,
               {W.norm(), lp, Ws.norm(), We_s.norm(), s(0, 0), ls, Wv.norm(), We_v.norm(),
                r.norm() / std::sqrt(double(o.m)), c.norm() / std::sqrt(double(o.n)), lv});
    if (t >= final_from) {
      const double v[9] = {W.squaredNorm(), lp, Ws.squaredNorm(), We_s.squaredNorm(), s(0, 0), ls,
                           Wv.squaredNorm(), We_v.squaredNorm(), lv};
      for (int k = 0; k < 9; ++k) fin[k] += v[k];
      ++fin_n;
    }
    if (t == o.steps) break;
    const Mat<double> noise = core::randn<double>(rng, o.m, o.n, o.sigma);  // one draw shared by the three models
    step(mat_rule, W, Mat<double>(W - target + noise), st_w);
    {
      const Mat<double> G = We_s - target + noise;  // ∇_{W_eff}
      const Mat<double> gs = Mat<double>::Constant(1, 1, G.cwiseProduct(Ws).sum());
      step(mat_rule, Ws, Mat<double>(s(0, 0) * G), st_ws);
      step(mult_rule, s, gs, st_s);
    }
    {
      const LrmGradients g = lrm_gradients(r.col(0), Wv, c.col(0), Mat<double>(We_v - target + noise));
      step(mat_rule, Wv, g.W, st_wv);
      step(mult_rule, r, Mat<double>(g.r), st_r);
      step(mult_rule, c, Mat<double>(g.c), st_c);
    }
  }
  const double nf = double(fin_n);
  return {std::sqrt(fin[0] / nf), fin[1] / nf, std::sqrt(fin[2] / nf), std::sqrt(fin[3] / nf), fin[4] / nf, fin[5] / nf,
          std::sqrt(fin[6] / nf), std::sqrt(fin[7] / nf), fin[8] / nf, log_row_norm_corr(W, target),
          log_row_norm_corr(eff_vector(), target)};
}

}  // namespace

ToyRun run_noise_wd(const NoiseWdOptions& o, std::uint64_t seed) {
  core::Rng rng(seed);
  ToyRun run;

  // ---- 1. equilibrium grid
  std::vector<std::pair<double, double>> grid{{o.eta, o.lambda}};
  for (double f : o.grid_factors) grid.push_back({o.eta * f, o.lambda / f});
  for (double f : o.grid_factors) grid.push_back({o.eta * f, o.lambda * f});
  std::vector<EqPoint> eq;
  for (const auto& [e, l] : grid) eq.push_back(equilibrium(e, l, o, rng));
  auto column = [&](double EqPoint::*f) {
    std::vector<double> v;
    for (const auto& p : eq) v.push_back(p.*f);
    return v;
  };
  run.arrays = {{"eq_eta", column(&EqPoint::eta)},
                {"eq_lambda", column(&EqPoint::lambda)},
                {"eq_sgd_norm", column(&EqPoint::sgd_norm)},
                {"eq_sgd_closed", column(&EqPoint::sgd_closed)},
                {"eq_sgd_se_rel", column(&EqPoint::sgd_se_rel)},
                {"eq_adamw_norm", column(&EqPoint::adamw_norm)},
                {"eq_adamw_estimate", column(&EqPoint::adamw_estimate)}};
  const auto [sgd_b, sgd_c] = scaling_exponents(eq, &EqPoint::sgd_norm);
  const auto [adam_b, adam_c] = scaling_exponents(eq, &EqPoint::adamw_norm);

  // ---- 2. learnable multipliers on a regression target: the headline target (series), then the grid
  const MultiplierOutcome head = train_multipliers(o, o.target_norm, rng, &run);
  std::vector<MultiplierOutcome> tg;
  for (double tn : o.target_grid) tg.push_back(train_multipliers(o, tn, rng, nullptr));
  auto tcol = [&](double MultiplierOutcome::*f) {
    std::vector<double> v;
    for (const auto& x : tg) v.push_back(x.*f);
    return v;
  };
  run.arrays.insert(run.arrays.end(), {{"tg_target_norm", o.target_grid},
                                       {"tg_plain_norm", tcol(&MultiplierOutcome::plain_norm)},
                                       {"tg_plain_loss", tcol(&MultiplierOutcome::plain_loss)},
                                       {"tg_scalar_bar_norm", tcol(&MultiplierOutcome::scalar_bar_norm)},
                                       {"tg_scalar_eff_norm", tcol(&MultiplierOutcome::scalar_eff_norm)},
                                       {"tg_scalar_loss", tcol(&MultiplierOutcome::scalar_loss)},
                                       {"tg_vector_bar_norm", tcol(&MultiplierOutcome::vector_bar_norm)},
                                       {"tg_vector_eff_norm", tcol(&MultiplierOutcome::vector_eff_norm)},
                                       {"tg_vector_loss", tcol(&MultiplierOutcome::vector_loss)}});
  const EqPoint& base = eq.front();
  run.metrics = {{"seed", static_cast<std::int64_t>(seed)},
                 {"sgd_eq_norm", base.sgd_norm},
                 {"sgd_eq_closed", base.sgd_closed},
                 {"sgd_eq_se_rel", base.sgd_se_rel},
                 {"adamw_eq_norm", base.adamw_norm},
                 {"adamw_eq_estimate", base.adamw_estimate},
                 {"sgd_exponent_ratio", sgd_b},
                 {"sgd_exponent_product", sgd_c},
                 {"adamw_exponent_ratio", adam_b},
                 {"adamw_exponent_product", adam_c},
                 {"target_norm", o.target_norm},
                 {"plain_norm_final", head.plain_norm},
                 {"plain_loss_final", head.plain_loss},
                 {"scalar_bar_norm_final", head.scalar_bar_norm},
                 {"scalar_eff_norm_final", head.scalar_eff_norm},
                 {"scalar_s_final", head.scalar_s},
                 {"scalar_loss_final", head.scalar_loss},
                 {"vector_bar_norm_final", head.vector_bar_norm},
                 {"vector_eff_norm_final", head.vector_eff_norm},
                 {"vector_loss_final", head.vector_loss},
                 {"plain_row_corr", head.plain_row_corr},
                 {"vector_row_corr", head.vector_row_corr}};
  return run;
}

std::unique_ptr<Toy> make_noise_wd_toy() {
  return make_spec_toy<NoiseWdOptions>({"noise-wd",
                                 "Seed 002 (qualitative proxy): noise-WD equilibrium norm ~ sqrt(eta/lambda) under SGD and AdamW, and "
           "learnable scalar / row-column multipliers that move the effective scale away from it.",
                                 [](const NoiseWdOptions& o) { return o.seeds; },
                                 [](const NoiseWdOptions& o, std::uint64_t seed) { return run_noise_wd(o, seed); },
                                 [](const std::vector<ToyRun>& runs) {
                                   return means_and_worst(runs, {"sgd_eq_norm", "sgd_eq_closed", "adamw_eq_norm", "adamw_eq_estimate",
                                                                 "adamw_exponent_ratio", "adamw_exponent_product", "target_norm",
                                                                 "plain_norm_final", "plain_loss_final", "scalar_bar_norm_final",
                                                                 "scalar_eff_norm_final", "scalar_loss_final", "vector_bar_norm_final",
                                                                 "vector_eff_norm_final", "vector_loss_final"},
                                                          {});
                                 }});
}

}  // namespace gaugelab::toys
