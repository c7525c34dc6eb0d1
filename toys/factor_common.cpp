#include "toys/factor_common.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/eigen_products.hpp"

namespace gaugelab::toys {

std::vector<double> log_grid(double lo, double hi, int points, const std::string& what) {
  if (!(lo > 0.0 && hi >= lo && std::isfinite(hi)))
    throw io::UsageError(what + ": need 0 < min <= max (got " + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  if (points < 1) throw io::UsageError(what + ": need at least one point");
  std::vector<double> g(static_cast<size_t>(points));
  const double a = std::log(lo), b = std::log(hi);
  for (int i = 0; i < points; ++i) g[static_cast<size_t>(i)] = points == 1 ? lo : std::exp(a + (b - a) * i / (points - 1));
  g.front() = lo;  // exact end points: no exp(log(x)) round-off at the ends the user named
  g.back() = points == 1 ? lo : hi;
  return g;
}

double rel_err(double sim, double ref) {
  const double d = std::fabs(sim - ref);
  return ref != 0.0 ? d / std::fabs(ref) : d;
}

double rel_err(const core::Mat<double>& sim, const core::Mat<double>& ref) {
  if (sim.rows() != ref.rows() || sim.cols() != ref.cols()) throw std::invalid_argument("rel_err: shapes differ");
  const double d = (sim - ref).norm(), r = ref.norm();
  return r != 0.0 ? d / r : d;
}

double half_sq_dist(const core::Mat<double>& M, const core::Mat<double>& Y) { return 0.5 * (M - Y).squaredNorm(); }

FactorGradients factor_gradients(const core::FactorPair<double>& p, const core::Mat<double>& Y) {
  FactorGradients g;
  g.G = core::represented(p) - Y;
  g.G_A = g.G * p.B;
  g.G_B = g.G.transpose() * p.A;
  return g;
}

core::FactorPair<double> factor_step(const core::FactorPair<double>& p, const core::Mat<double>& Y,
                                     const core::RuleOptions& rule_a, const core::RuleOptions& rule_b,
                                     const core::QuotientOptions* quotient, core::PairState<double>& state) {
  const FactorGradients g = factor_gradients(p, Y);
  core::PairStep<double> s = core::step_pair(rule_a, rule_b, p.A, p.B, g.G_A, g.G_B, state);
  if (quotient) {
    core::PairIncrement<double> c = core::opposite_gram_correction(p.A, p.B, s.a.U, s.b.U, *quotient);
    s.a.U = std::move(c.U_A);
    s.b.U = std::move(c.U_B);
  }
  core::FactorPair<double> out = p;
  core::apply_pair(out.A, out.B, s);
  return out;
}

void begin_series(ToyRun& run, std::vector<std::string> names) {
  run.steps.clear();
  run.series_names = std::move(names);
  run.series.assign(run.series_names.size(), {});
}

void push_row(ToyRun& run, std::int64_t step, const std::vector<double>& values) {
  if (values.size() != run.series.size())
    throw std::logic_error("push_row: " + std::to_string(values.size()) + " values for " +
                           std::to_string(run.series.size()) + " series");
  run.steps.push_back(step);
  for (size_t k = 0; k < values.size(); ++k) run.series[k].push_back(values[k]);
}

double max_of(const std::vector<double>& v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}

}  // namespace gaugelab::toys
