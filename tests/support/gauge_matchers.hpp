// Reusable gauge property checks ("matchers"), generic over the parameter type θ and the gauge type g.
// Every tier runs its actions and fixes through the same checks:
//   expect_function_invariant   f(act(θ, g)) == f(θ) for sampled g
//   expect_group_laws           act(act(θ, g), k) == act(θ, compose(g, k)); inverse undoes; identity does nothing
//   expect_fix_idempotent       fix(fix(θ)) == fix(θ)
//   expect_fix_preserves_object represented(fix(θ)) == represented(θ)
//   expect_relaxation_law       RK4 gauge-only flow: v(t) == v(0)·exp(−∫κ dt)   (seed 004 eq. 22)
// Matchers never assert; they return a MatchResult {ok, worst, msg} so a test can REQUIRE(r.ok) — or
// REQUIRE(!r.ok) for a deliberately wrong gauge. GAUGE_REQUIRE(r) prints msg on failure.
// Callables:  f(θ) → Mat;  sample(rng) → g;  act(θ, g) → θ';  compose(g, k) → g∘k ("g first");
//             inverse(g) → g⁻¹;  distance(θ₁, θ₂) → double (ParamDistance{} by default);  fix(θ) → θ'.
#pragma once

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/attention_gauge.hpp"
#include "core/coordinates.hpp"
#include "core/factor_gauge.hpp"
#include "core/lrm_gauge.hpp"
#include "core/random.hpp"
#include "core/relu_gauge.hpp"

namespace gaugelab::test {

using core::Index;

// ---------------------------------------------------------------- parameter distance

/// Every parameter block of θ, cast to double (the order is fixed per type; shapes must agree
/// between the two arguments of a distance).
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::Mat<T>& m) {
  return {m.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::FactorPair<T>& p) {
  return {p.A.template cast<double>(), p.B.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::AttentionHead<T>& h) {
  return {h.W_q.template cast<double>(), h.W_k.template cast<double>(), h.W_v.template cast<double>(),
          h.W_o.template cast<double>(), h.b_q.template cast<double>(), h.b_k.template cast<double>(),
          h.b_v.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::AttentionLayer<T>& l) {
  return {l.W_q.template cast<double>(), l.W_k.template cast<double>(), l.W_v.template cast<double>(),
          l.W_o.template cast<double>(), l.b_q.template cast<double>(), l.b_k.template cast<double>(),
          l.b_v.template cast<double>(), l.b_o.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::ReluNet<T>& n) {
  return {n.W1.template cast<double>(), n.b1.template cast<double>(), n.W2.template cast<double>(),
          n.b2.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::QkMultipliers<T>& m) {
  return {m.r_q.template cast<double>(), m.r_k.template cast<double>(), m.b_q.template cast<double>(),
          m.b_k.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::VoMultipliers<T>& m) {
  return {m.r_v.template cast<double>(), m.b_v.template cast<double>(), m.c_o.template cast<double>()};
}
template <class T>
std::vector<core::Mat<double>> param_blocks(const core::LnColumnPairing<T>& p) {
  std::vector<core::Mat<double>> out{p.gain.template cast<double>(), p.bias.template cast<double>()};
  for (const auto& c : p.next_columns) out.push_back(c.template cast<double>());
  return out;
}

/// Relative distance ‖θ₁ − θ₂‖ / ‖θ₁‖ over all blocks together (absolute when θ₁ = 0);
/// +∞ when the two have different block shapes.
struct ParamDistance {
  template <class Theta>
  double operator()(const Theta& a, const Theta& b) const {
    const auto pa = param_blocks(a), pb = param_blocks(b);
    if (pa.size() != pb.size()) return HUGE_VAL;
    double diff2 = 0.0, norm2 = 0.0;
    for (std::size_t i = 0; i < pa.size(); ++i) {
      if (pa[i].rows() != pb[i].rows() || pa[i].cols() != pb[i].cols()) return HUGE_VAL;
      diff2 += (pa[i] - pb[i]).squaredNorm();
      norm2 += pa[i].squaredNorm();
    }
    return norm2 > 0.0 ? std::sqrt(diff2 / norm2) : std::sqrt(diff2);
  }
};

// ---------------------------------------------------------------- shared tolerances

/// Relative error allowed when a gauge with cond(S) <= 10 acts in DOUBLE on small blocks (sizes <= 16):
/// round-off is about cond(S)·size·ε ≈ 10·16·1.1e-16 ≈ 2e-14; 1e-11 leaves a 500× margin for
/// the solves and softmax, and is still ten orders below the O(0.1–10) error of a wrong gauge.
inline constexpr double kDoubleGaugeTol = 1e-11;

/// The same in FLOAT (ε ≈ 6e-8): cond·size·ε ≈ 1e-5, so 1e-4; a wrong gauge still errs by >= 1e-1.
inline constexpr double kFloatGaugeTol = 1e-4;

/// The condition number of the general-linear gauges the property tests draw (DESIGN tier 2 "general
/// with condition number κ"): large enough that S⁻ᵀ differs visibly from S, small enough for the above.
inline constexpr double kTestKappa = 10.0;

// ---------------------------------------------------------------- results

struct MatchResult {
  bool ok = true;
  double worst = 0.0;  // the largest error seen (same metric as the tolerance)
  std::string msg;     // where the worst error / first failure happened

  /// Folds another result into this one: ok only if both are, worst is the max, first failure kept.
  void merge(const MatchResult& other) {
    if (!other.ok && ok) msg = other.msg;
    if (ok && other.ok && other.worst > worst) msg = other.msg;
    ok = ok && other.ok;
    worst = std::max(worst, other.worst);
  }
};

/// Use in Catch2 tests: prints the matcher's message, then requires ok.
#define GAUGE_REQUIRE(result_expr)   \
  do {                               \
    const auto gauge_r_ = (result_expr); \
    INFO(gauge_r_.msg);              \
    REQUIRE(gauge_r_.ok);            \
  } while (false)

/// Which number of core::InvarianceError a function-invariance check compares with its tolerance.
enum class ErrorMetric { relative_fro, mean_abs, max_abs };

inline double pick(const core::InvarianceError& e, ErrorMetric m) {
  switch (m) {
    case ErrorMetric::mean_abs: return e.mean_abs;
    case ErrorMetric::max_abs: return e.max_abs;
    case ErrorMetric::relative_fro: break;
  }
  return e.relative_fro;
}

namespace detail {
inline MatchResult judge(double err, double tol, const std::string& where) {
  MatchResult r;
  r.worst = std::isnan(err) ? HUGE_VAL : err;
  r.ok = err <= tol;  // NaN fails
  std::ostringstream os;
  os << where << ": error " << err << (r.ok ? " <= " : " > ") << "tol " << tol;
  r.msg = os.str();
  return r;
}
}  // namespace detail

/// f(act(θ, g)) vs f(θ) for `samples` gauges g = sample(rng); error by `metric` (core::invariance_error).
template <class Theta, class F, class Sample, class Act>
MatchResult expect_function_invariant(F f, const Theta& theta, Sample sample, Act act, int samples, core::Rng& rng,
                                      double tol, ErrorMetric metric = ErrorMetric::relative_fro) {
  MatchResult total;
  const auto reference = f(theta);
  for (int k = 0; k < samples; ++k) {
    const auto g = sample(rng);
    const double err = pick(core::invariance_error(reference, f(act(theta, g))), metric);
    total.merge(detail::judge(err, tol, "function invariance, gauge sample " + std::to_string(k)));
  }
  return total;
}

/// Group laws of a (right) action: composition, inverse and identity, on `samples` pairs (g, k).
template <class Theta, class Sample, class Act, class Compose, class Inverse, class G, class Distance = ParamDistance>
MatchResult expect_group_laws(const Theta& theta, Sample sample, Act act, Compose compose, Inverse inverse,
                              const G& identity, int samples, core::Rng& rng, double tol, Distance distance = {}) {
  MatchResult total;
  total.merge(detail::judge(distance(act(theta, identity), theta), tol, "identity law"));
  for (int n = 0; n < samples; ++n) {
    const auto g = sample(rng);
    const auto k = sample(rng);
    const std::string tag = ", sample " + std::to_string(n);
    total.merge(detail::judge(distance(act(act(theta, g), k), act(theta, compose(g, k))), tol, "composition law" + tag));
    total.merge(detail::judge(distance(act(act(theta, g), inverse(g)), theta), tol, "inverse law" + tag));
  }
  return total;
}

/// fix(fix(θ)) vs fix(θ).
template <class Theta, class Fix, class Distance = ParamDistance>
MatchResult expect_fix_idempotent(Fix fix, const Theta& theta, double tol, Distance distance = {}) {
  const auto once = fix(theta);
  return detail::judge(distance(fix(once), once), tol, "fix idempotence");
}

/// represented(fix(θ)) vs represented(θ), relative Frobenius error.
template <class Theta, class Fix, class Represented>
MatchResult expect_fix_preserves_object(Fix fix, Represented represented, const Theta& theta, double tol) {
  const double err = core::invariance_error(represented(theta), represented(fix(theta))).relative_fro;
  return detail::judge(err, tol, "fix preserves the represented object");
}

/// Options of the relaxation-law check.
struct RelaxationCheck {
  double t_end = 1.0;       // integrate the flow over [0, t_end]
  int steps = 1000;         // RK4 steps (dt = t_end/steps)
  double tol = 1e-8;        // max |v(t) − v(0)e^{−K(t)}| allowed over all steps and coordinates
  double min_decay = 0.5;   // fail unless min_i K_i(t_end) ≥ this: a law that barely decays tests nothing
};

/// Integrates the state flow ẋ = velocity(x) together with K̇ = rate(x) (both RK4, so the integral
/// of κ is taken along the same trajectory), and compares coordinate(x(t)) with
/// coordinate(x(0))·exp(−K(t)) after every step (seed 004 eq. 22).
template <class Velocity, class Coordinate, class Rate>
MatchResult expect_relaxation_law(const core::Vec<double>& x0, Velocity velocity, Coordinate coordinate, Rate rate,
                                  const RelaxationCheck& check) {
  using V = core::Vec<double>;
  const V v0 = coordinate(x0);
  V x = x0;
  V big_k = V::Zero(v0.size());
  const double dt = check.t_end / check.steps;
  auto deriv = [&](const V& state, V& dx, V& dk) {
    dx = velocity(state);
    dk = rate(state);
  };
  MatchResult total;
  for (int s = 0; s < check.steps; ++s) {
    V k1x, k1k, k2x, k2k, k3x, k3k, k4x, k4k;
    deriv(x, k1x, k1k);
    deriv(x + 0.5 * dt * k1x, k2x, k2k);
    deriv(x + 0.5 * dt * k2x, k3x, k3k);
    deriv(x + dt * k3x, k4x, k4k);
    x += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
    big_k += dt / 6.0 * (k1k + 2.0 * k2k + 2.0 * k3k + k4k);
    const V predicted = v0.cwiseProduct((-big_k).array().exp().matrix());
    const double err = (coordinate(x) - predicted).cwiseAbs().maxCoeff();
    total.merge(detail::judge(err, check.tol, "relaxation law at step " + std::to_string(s + 1)));
  }
  if (big_k.minCoeff() < check.min_decay) {
    total.ok = false;
    total.msg = "relaxation law: min ∫κ dt = " + std::to_string(big_k.minCoeff()) + " < min_decay " +
                std::to_string(check.min_decay) + " (the check would be vacuous)";
  }
  return total;
}

}  // namespace gaugelab::test
