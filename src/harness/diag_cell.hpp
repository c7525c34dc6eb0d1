// One cell of the `diag heads` grid: a gauge family at one condition number κ. From the reference
// representative (the head as given, S = T = I) and from `gauges` gauge images (A S, B S⁻ᵀ) of both
// sectors, take one step with every rule variant under every wrapper and compare the represented
// motions (first order and exact) and the post-step losses with the reference step's.
//
// Gauge families (S for QK and T for VO drawn independently from the same family):
//   orthogonal  Haar O(d_h) (κ = 1; the family is run once, at κ = 1)
//   diagonal    diag(σ), log σ evenly spaced over [−½ log κ, ½ log κ] in random order (cond = κ, det = 1)
//   general     U·diag(σ)·Vᵀ, U, V Haar, the same σ (core::random_gl: cond = κ exactly, |det| = 1)
// Wrappers (seed 003 §3, §7) act on the rule's increments at the representative:
//   none      the raw increment
//   full      opposite-Gram correction U_A(BᵀB + λI)⁻¹, U_B(AᵀA + λI)⁻¹ (Cholesky or QR solve)
//   diagonal  the same with the Grams' diagonals
//   periodic  full every k steps, `between` otherwise: the one-step diagnostic takes the expected
//             increment over a uniformly random phase, (1/k)·full + (1 − 1/k)·between
//   smooth    random gauge smoothing over N gauges drawn once per cell from the cell's own family and
//             κ (common to every representative, so the spread measures gauge dependence, not
//             sampling noise); over the orthogonal family this is the compact-group average
// Each rule×wrapper's learning rate is set at the reference so that ‖ΔM(I)‖ = step_size·‖M‖
// (every rule's increment is linear in lr), and the same lr is used from every representative.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attention_head.hpp"
#include "core/quotient.hpp"
#include "core/random.hpp"
#include "harness/diag_options.hpp"
#include "harness/diag_rules.hpp"
#include "harness/diag_spread.hpp"
#include "harness/head_problem.hpp"
#include "harness/head_source.hpp"

namespace gaugelab::harness {

/// The QK gauge S and the VO gauge T, each [r, r].
struct GaugePair {
  Mat<double> S;
  Mat<double> T;
};

/// Opposite-Gram correction of both sectors at `at` (core::opposite_gram_correction; VO with B = W_oᵀ).
HeadFactors opposite_gram(const HeadFactors& at, const HeadFactors& u, const core::QuotientOptions& q);

/// Gauge image of `x` (harness::gauge_factors; column scalings when both gauges are diagonal).
HeadFactors gauge_image(const HeadFactors& x, const GaugePair& g);

/// One gauge [r, r] of `family` (orthogonal | diagonal | general) with condition number κ.
Mat<double> draw_gauge(const std::string& family, double kappa, Index r, core::Rng& rng);

struct CellSpec {
  std::string family;
  double kappa = 1;
  std::uint64_t seed = 0;
};

/// One table row: a rule variant × wrapper of one cell.
struct CellRow {
  std::string rule, transport, wrapper;
  double lr = 0;              // calibrated learning rate
  double loss_after_ref = 0;  // post-step loss of the reference step
  Spread first, exact, loss, increment;  // over the cell's gauges
  std::int64_t failures = 0;  // gauges whose step failed (e.g. a Gram not numerically positive definite)
};

/// One row of `diag trajectory`: a rule variant under one correction schedule, and how far the represented
/// trajectories from the gauge images drift from the reference's, step by step.
struct TrajectoryRow {
  std::string rule, transport;
  std::string schedule;            // none | full | periodic
  std::int64_t period = 0;         // periodic: the full correction every `period` steps (full: 1, none: 0)
  double lr = 0;                   // calibrated at the reference's first step
  std::vector<Spread> separation;  // [steps]: after step t + 1, over the cell's gauges (see run_trajectory_cell)
  std::int64_t failures = 0;       // gauges whose trajectory failed (a Gram not numerically positive definite)
};

struct TrajectoryCell {
  CellSpec spec;
  std::vector<TrajectoryRow> rows;  // variants × schedules, variant-major
};

struct CellResult {
  CellSpec spec;
  std::vector<CellRow> rows;  // variants × wrappers, variant-major
  Spread forward;             // relative forward error (logits, head output) over the gauges
};

class HeadDiagnostic {
 public:
  /// Builds the loss problem, the warm states and the rule variants for `head`; seeds derive from `seed`.
  /// `data`: a checkpoint's teacher head and real input rows (head_source.hpp); empty: random teacher, N(0, 1) batches.
  HeadDiagnostic(const DiagOptions& o, const core::AttentionHead<double>& head, std::uint64_t seed, const HeadData& data = {});

  /// Runs one cell, OpenMP-parallel over its gauges (results do not depend on the thread count).
  CellResult run_cell(const CellSpec& c) const;

  /// Multi-step runs (`diag trajectory`): from the reference and from each gauge image of the cell, `steps`
  /// steps of every rule variant under each schedule — none, full every step, and full every k steps for k in
  /// `periods` (o.between on the others) — with the state warmed at the reference and transported as in
  /// run_cell. Separation after step t: ‖R_g(t) − R_ref(t)‖ / ‖R_ref(t) − R_ref(0)‖, R = the represented
  /// objects on the batch (logits X̃·M_QK·X̃ᵀ and value-output map X̃·M_VO, r-wide products only): 0 for a
  /// quotient-compatible trajectory, O(1) once the gauge images have gone elsewhere.
  TrajectoryCell run_trajectory_cell(const CellSpec& c, std::int64_t steps, const std::vector<std::int64_t>& periods) const;

  /// Relative forward error of the gauge image: max of the logits' and the head output's.
  double forward_error(const GaugePair& g) const;

  double loss_before() const { return loss_before_; }
  const std::vector<RuleVariant>& variants() const { return variants_; }
  const HeadFactors& factors() const { return base_; }

  struct Representative;  // one gauge image with its gradient (and its smoothing images)
  struct RefStep;         // the reference step of one variant × wrapper

 private:
  Representative make_representative(const GaugePair& g, const std::vector<GaugePair>& smoothing) const;
  struct Wrapped;         // one wrapped increment in the representative's and in the reference coordinates
  /// Wrapped unit increments of variant v at `rep`, one per wrapper (ok = false: that wrapper failed).
  std::vector<std::shared_ptr<const Wrapped>> wrapped_increments(std::size_t v, const Representative& rep,
                                                                 std::vector<bool>& ok) const;
  StepCoefs coefs_at(std::size_t v, const HeadFactors& at, const HeadFactors& inc, double lr) const;
  HeadFactors pull_back(const HeadFactors& u, const Representative& rep) const;

  DiagOptions o_;
  core::AttentionHead<double> head_;
  Mat<double> x_;  // [T, d] batch of the forward check
  HeadFactors base_;
  HeadFactors base_gram_;  // AᵀA [r, r] of every reference factor
  HeadProblem problem_;
  std::vector<RuleVariant> variants_;
  std::vector<HeadStates> warm_;  // per variant, at the reference
  core::QuotientOptions full_, diag_;
  double loss_before_ = 0, m_norm2_ = 0;
  Mat<double> logits_ref_, output_ref_;
};

}  // namespace gaugelab::harness
