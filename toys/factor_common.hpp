// Small helpers shared by the factor-pair toys of seed 003 (factor-scalar, factor-matrix, muon,
// wd-gram, hyperball) and noise-wd: grids, relative errors, and filling a ToyRun column by column.
// Nothing here is a formula of the seeds; those live in src/core and in each toy's closed form.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/factor_gauge.hpp"
#include "core/quotient.hpp"
#include "core/types.hpp"
#include "core/update_rules.hpp"
#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

/// `points` values evenly spaced in log between lo and hi, both included (points = 1: {lo}).
/// Throws io::UsageError unless 0 < lo <= hi and points >= 1.
std::vector<double> log_grid(double lo, double hi, int points, const std::string& what);

/// |sim − ref| / |ref| (|sim − ref| when ref = 0): the agreement measure of every closed form.
double rel_err(double sim, double ref);
/// ‖sim − ref‖_F / ‖ref‖_F (absolute when ref = 0).
double rel_err(const core::Mat<double>& sim /*[m, n]*/, const core::Mat<double>& ref /*[m, n]*/);

/// ½‖M − Y‖_F², the loss every matrix factor toy fits.
double half_sq_dist(const core::Mat<double>& M /*[m, n]*/, const core::Mat<double>& Y /*[m, n]*/);

/// Gradients of L(A, B) = ½‖ABᵀ − Y‖_F² (seed 003 §3, "GD Exposes the Representative"):
/// G = ∇_M ℓ = ABᵀ − Y, ∇_A L = G·B, ∇_B L = Gᵀ·A.
struct FactorGradients {
  core::Mat<double> G;    // [m, n]
  core::Mat<double> G_A;  // [m, r]
  core::Mat<double> G_B;  // [n, r]
};
FactorGradients factor_gradients(const core::FactorPair<double>& p, const core::Mat<double>& Y /*[m, n]*/);

/// One step of the core's update rules on ½‖ABᵀ − Y‖_F²: raw increments from core::step_pair
/// (rule_a for A, rule_b for B), then — if `quotient` is given — the core's opposite-Gram
/// correction of the increments, then core::apply_pair (shrink-plus-increment, retraction).
core::FactorPair<double> factor_step(const core::FactorPair<double>& p, const core::Mat<double>& Y /*[m, n]*/,
                                     const core::RuleOptions& rule_a, const core::RuleOptions& rule_b,
                                     const core::QuotientOptions* quotient, core::PairState<double>& state);

/// Declares the run's series columns (all empty).
void begin_series(ToyRun& run, std::vector<std::string> names);
/// Appends one logged row: step (or grid index) and one value per declared series, in order.
void push_row(ToyRun& run, std::int64_t step, const std::vector<double>& values);

/// Largest value of a list (−inf for an empty list); NaN anywhere gives NaN, so a failed check shows.
double max_of(const std::vector<double>& v);

}  // namespace gaugelab::toys
