// The update rules `diag heads` steps with (their table: diag_rule_table.hpp, one row per rule with
// its core rule, its warm-up, its pair step and its stated invariance), as variants:
// adamw-warm comes once per transport mode of `transports` (none | vector | covector), momentum with
// `momentum_transport` (default covector: its buffer is a sum of raw gradients; `each`: once per mode of
// `transports`, for the transport table): the state warmed at
// the reference is carried to each representative by core::transport_state. Adam's second moment only
// has a transport for diagonal gauges; for other gauges it is left untouched (the core's explicit,
// documented approximation: "full gauges interact poorly with elementwise adaptive state").
//
// Every rule runs with lr = 1 and no decay, so its increment is the unit increment; the harness
// scales it by the calibrated lr and applies the decoupled shrink itself (all five rules are linear
// in lr). The rule sees each factor in its natural orientation (W_o as [r, d], not W_oᵀ), so
// Muon's √max(1, rows/cols) and the state shapes match what an optimizer of the model would see.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/transport.hpp"
#include "core/update_rules.hpp"
#include "harness/diag_rule_table.hpp"
#include "harness/head_problem.hpp"

namespace gaugelab::harness {

struct DiagOptions;

struct RuleVariant {
  std::string rule;       // a name of diag_rule_table.hpp
  std::string transport;  // none | vector | covector for warmed-up rules, "-" otherwise
  bool warm = false;      // state warmed at the reference, transported to each representative
  bool hyperball = false; // post-step retraction onto ‖W‖_F = R
  core::RuleOptions options;  // lr = 1, weight decay 0
  core::TransportMode mode = core::TransportMode::none;
  PairStep pair = PairStep::none;  // the literature's step on each factor pair (diag_rule_table.hpp)
  double pair_param = 0;   // rpgd's and lora-pro's δ, circuit-muon's λ
};

/// Every rule of o.rules in that order, adamw-warm once per transport of o.transports.
std::vector<RuleVariant> rule_variants(const DiagOptions& o);

/// Optimizer state per factor, each in its factor's natural orientation (kVB's as W_o [r, d]).
using HeadStates = std::array<core::RuleState<double>, kFactors>;

/// The state after feeding `grads` (each shaped like `at`) through the rule at parameters `at`.
HeadStates warm_states(const RuleVariant& v, const HeadFactors& at, const std::vector<HeadFactors>& grads);

/// Carries states along the gauge (S on QK [r, r], T on VO [r, r]) with the variant's transport mode.
void transport_states(HeadStates& st, const Mat<double>& S, const Mat<double>& T, core::TransportMode mode);

/// Unit-lr increments of every factor at `p` with gradient `g` (each shaped like its factor); `st`
/// is advanced.
HeadFactors propose_head(const RuleVariant& v, const HeadFactors& p, const HeadFactors& g, HeadStates& st);

}  // namespace gaugelab::harness
