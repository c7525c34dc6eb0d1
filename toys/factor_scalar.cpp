#include "toys/factor_scalar.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "toys/factor_common.hpp"
#include "toys/spec_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

using io::Range;

void declare(io::Options& opts, FactorScalarOptions& o) {
  opts.add("eta", &o.eta, "GD learning rate", Range::positive())
      .add("eps", &o.eps, "both representatives have ab = 1 - eps", Range{0.0, 1.0, true, true})
      .add("K", &o.K, "imbalanced representative a = 1/K, b = (1 - eps)K", Range::positive())
      .add("K-min", &o.K_min, "K sweep: first point", Range::positive())
      .add("K-max", &o.K_max, "K sweep: last point", Range::positive())
      .add("K-points", &o.K_points, "K sweep: log-spaced points", Range::at_least(1));
  opts.check([&o] {
    if (!(o.K_min <= o.K_max)) throw io::UsageError("--K-min must be <= --K-max");
  });
}

ScalarStep scalar_gd_closed_form(double a, double b, double eta, double eps) {
  const double s = a * a + b * b;
  ScalarStep r;
  r.m_after = a * b + eta * eps * s + eta * eta * eps * eps * a * b;             // seed 003 §2, m_after
  const double bracket = -1.0 + eta * s + eta * eta * eps * (1.0 - eps);        // seed 003 §2, "Loss Condition"
  r.loss_after = 0.5 * eps * eps * bracket * bracket;
  return r;
}

ScalarStep scalar_quotient_closed_form(double a, double b, double eta, double eps) {
  // Δa = U_a/b² = ηεb/b² = ηε/b, Δb = ηε/a  (seed 003 §3 "Opposite-Gram Correction", r = 1, λ = 0), so
  // m_after = (a + ηε/b)(b + ηε/a) = ab + 2ηε + η²ε²/(ab), with ab = 1 − ε.
  const double ab = 1.0 - eps;
  ScalarStep r;
  r.m_after = a * b + 2.0 * eta * eps + eta * eta * eps * eps / ab;
  const double bracket = -1.0 + 2.0 * eta + eta * eta * eps / ab;  // (m_after − 1)/ε
  r.loss_after = 0.5 * eps * eps * bracket * bracket;
  return r;
}

ScalarStep scalar_gd_simulated(double a, double b, double eta, bool quotient) {
  core::FactorPair<double> p{core::Mat<double>::Constant(1, 1, a), core::Mat<double>::Constant(1, 1, b)};  // [1, 1] each
  const core::Mat<double> Y = core::Mat<double>::Ones(1, 1);  // [1, 1] target m = 1
  const core::RuleOptions sgd = core::SgdOptions{eta, 0.0};
  const core::QuotientOptions q{core::QuotientMode::full, 0.0, core::GramSolve::cholesky};
  core::PairState<double> st;
  const core::FactorPair<double> after = factor_step(p, Y, sgd, sgd, quotient ? &q : nullptr, st);
  const double m = core::represented(after)(0, 0);
  return {m, 0.5 * (m - 1.0) * (m - 1.0)};
}

double scalar_threshold_K(double eta, double eps, double c) {
  // η(K⁻² + (1 − ε)²K²) = c  ⇔  (1 − ε)²x² − (c/η)x + 1 = 0 with x = K²; the larger root is K > 1.
  const double q = (1.0 - eps) * (1.0 - eps), p = c / eta;
  const double disc = p * p - 4.0 * q;
  if (disc < 0.0) return std::numeric_limits<double>::quiet_NaN();
  return std::sqrt((p + std::sqrt(disc)) / (2.0 * q));
}

ToyRun run_factor_scalar(const FactorScalarOptions& o) {
  const double eta = o.eta, eps = o.eps;
  const double loss_before = 0.5 * eps * eps;
  double err_m = 0, err_loss = 0;
  // The loss is compared relative to max(f_after, f_before): near η(a² + b²) ≈ 1 the step lands on
  // m ≈ 1 and f_after = ½(m − 1)² is computed with cancellation (relative error ≈ u/|m − 1| for any
  // formula), so a plain relative error there measures that cancellation, not the closed form.
  auto track = [&](const ScalarStep& sim, const ScalarStep& cf) {
    err_m = std::max(err_m, rel_err(sim.m_after, cf.m_after));
    err_loss = std::max(err_loss, std::fabs(sim.loss_after - cf.loss_after) / std::max(cf.loss_after, loss_before));
  };

  ToyRun run;
  begin_series(run, {"K", "eta_a2_b2", "m_after_closed", "m_after_sim", "loss_after_closed", "loss_after_sim",
                     "loss_after_quotient_closed", "loss_after_quotient_sim", "loss_ratio_sim"});
  const auto grid = log_grid(o.K_min, o.K_max, o.K_points, "--K-min/--K-max");
  for (size_t i = 0; i < grid.size(); ++i) {
    const double K = grid[i], a = 1.0 / K, b = (1.0 - eps) * K;
    const ScalarStep cf = scalar_gd_closed_form(a, b, eta, eps), sim = scalar_gd_simulated(a, b, eta, false);
    const ScalarStep qcf = scalar_quotient_closed_form(a, b, eta, eps), qsim = scalar_gd_simulated(a, b, eta, true);
    track(sim, cf);
    track(qsim, qcf);
    push_row(run, static_cast<std::int64_t>(i),
             {K, eta * (a * a + b * b), cf.m_after, sim.m_after, cf.loss_after, sim.loss_after, qcf.loss_after,
              qsim.loss_after, sim.loss_after / loss_before});
  }

  const double ab = std::sqrt(1.0 - eps);  // balanced a = b
  const double ia = 1.0 / o.K, ib = (1.0 - eps) * o.K;
  const ScalarStep bal_cf = scalar_gd_closed_form(ab, ab, eta, eps), bal_sim = scalar_gd_simulated(ab, ab, eta, false);
  const ScalarStep imb_cf = scalar_gd_closed_form(ia, ib, eta, eps), imb_sim = scalar_gd_simulated(ia, ib, eta, false);
  const ScalarStep q_cf = scalar_quotient_closed_form(ia, ib, eta, eps);
  const ScalarStep q_bal = scalar_gd_simulated(ab, ab, eta, true), q_imb = scalar_gd_simulated(ia, ib, eta, true);
  track(bal_sim, bal_cf);
  track(imb_sim, imb_cf);
  track(q_bal, q_cf);
  track(q_imb, q_cf);

  run.metrics = {{"loss_before", loss_before},
                 {"eta_a2_b2_balanced", eta * 2.0 * ab * ab},
                 {"eta_a2_b2_imbalanced", eta * (ia * ia + ib * ib)},
                 {"m_after_balanced_closed", bal_cf.m_after},
                 {"m_after_balanced_sim", bal_sim.m_after},
                 {"loss_after_balanced_closed", bal_cf.loss_after},
                 {"loss_after_balanced_sim", bal_sim.loss_after},
                 {"m_after_imbalanced_closed", imb_cf.m_after},
                 {"m_after_imbalanced_sim", imb_sim.m_after},
                 {"loss_after_imbalanced_closed", imb_cf.loss_after},
                 {"loss_after_imbalanced_sim", imb_sim.loss_after},
                 {"loss_after_quotient_closed", q_cf.loss_after},
                 {"loss_after_quotient_balanced_sim", q_bal.loss_after},
                 {"loss_after_quotient_imbalanced_sim", q_imb.loss_after},
                 {"K_threshold", scalar_threshold_K(eta, eps, 2.0)},
                 {"K_threshold_exact", scalar_threshold_K(eta, eps, 2.0 - eta * eta * eps * (1.0 - eps))},
                 {"max_rel_err_m", err_m},
                 {"max_rel_err_loss", err_loss}};
  return run;
}

std::unique_ptr<Toy> make_factor_scalar_toy() {
  return make_spec_toy<FactorScalarOptions>({"factor-scalar",
                                 "Seed 003 §2: one GD step on f = ½(ab − 1)² from balanced and imbalanced representatives of the same "
           "product, closed form beside simulation, plain and opposite-Gram corrected, with a K sweep.",
                                 nullptr,
                                 [](const FactorScalarOptions& o, std::uint64_t) { return run_factor_scalar(o); },
                                 nullptr});
}

}  // namespace gaugelab::toys
