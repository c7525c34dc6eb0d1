// `gaugelab toy factor-scalar` — seed 003 §2, "The Smallest Failure".
//
// m = ab, f(a, b) = ½(ab − 1)², two representatives of the same product ab = 1 − ε:
//   balanced    a = b = √(1 − ε)                      (a² + b² ≈ 2)
//   imbalanced  a = 1/K, b = (1 − ε)K                 (a² + b² ≈ K²)
// One plain GD step from each, in closed form (seed 003 §2, "Coordinate GD" and "Loss Condition")
//   m_after = ab + ηε(a² + b²) + η²ε²ab
//   f_after = ½ε²[−1 + η(a² + b²) + η²ε(1 − ε)]²
// beside the same step simulated with the core (core::sgd_step through core::step_pair /
// apply_pair), and the opposite-Gram corrected step (seed 003 §3 applied to §2), whose closed form
//   m_after = ab + 2ηε + η²ε²/(ab)   (Δa = ηε/b, Δb = ηε/a)
// depends on ab only: every representative takes the same step.
// A K sweep (log grid K-min..K-max) puts the loss ratio beside the threshold η(a² + b²) = 2.
// The series index is the K-grid point (the `step` column counts grid points, not GD steps).
// Agreement metrics: max_rel_err_m = max |m_sim − m_cf|/|m_cf|; max_rel_err_loss = max
// |f_sim − f_cf|/max(f_cf, f_before) (see run_factor_scalar for why the loss needs that scale).
#pragma once

#include <cstdint>

#include "io/options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct FactorScalarOptions {
  double eta = 1e-3;    // η, GD learning rate (seed 003 §2 example)
  double eps = 1e-3;    // ε: both representatives have ab = 1 − ε, loss ½ε² (seed 003 §2 example)
  double K = 1e6;       // imbalance of the headline representative a = 1/K, b = (1 − ε)K (seed: 1e6)
  double K_min = 1.0;   // K sweep: first grid point
  double K_max = 1e6;   // K sweep: last grid point (the seed's K)
  int K_points = 121;   // K sweep: log-spaced points (20 per decade by default)
};

void declare(io::Options& opts, FactorScalarOptions& o);

/// m and f = ½(m − 1)² after one step.
struct ScalarStep {
  double m_after = 0;
  double loss_after = 0;
};

/// Closed form of one plain GD step from (a, b) with ab = 1 − ε (seed 003 §2).
ScalarStep scalar_gd_closed_form(double a, double b, double eta, double eps);
/// Closed form of one opposite-Gram corrected GD step: m_after = ab + 2ηε + η²ε²/(ab).
ScalarStep scalar_quotient_closed_form(double a, double b, double eta, double eps);
/// The same step simulated with the core's SGD rule (and, if `quotient`, its opposite-Gram correction).
ScalarStep scalar_gd_simulated(double a, double b, double eta, bool quotient);

/// The K > 1 at which the imbalanced representative has η(a² + b²) = c (NaN if none):
/// c = 2 is the seed's approximate threshold; c = 2 − η²ε(1 − ε) is where f_after = f_before exactly.
double scalar_threshold_K(double eta, double eps, double c);

/// The whole toy: headline metrics at K, the K sweep as series.
ToyRun run_factor_scalar(const FactorScalarOptions& o);

}  // namespace gaugelab::toys
