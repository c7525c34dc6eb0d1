// The rules `diag heads` steps with, one row each: the core rule that makes the increments
// (core/update_rule_table.hpp), how its state starts, the literature's step on each factor pair, and
// the invariance its source states. The --rules choices, --help, rule_variants() and propose_head()
// (diag_rules.cpp) read this table; the log records each rule's stated invariance beside its spread.
#pragma once

#include <string_view>
#include <vector>

#include "core/update_rule_table.hpp"

namespace gaugelab::harness {

/// How a rule's optimizer state starts.
enum class RuleWarmth {
  fresh,      // fresh state (a momentum-free first step)
  transports, // warmed at the reference, carried to each representative: once per mode of --transports
  momentum,   // warmed; one transport (--momentum-transport), or each mode of --transports with `each`
};

/// The literature's step on each factor pair, after (or instead of) the core rule's increments.
enum class PairStep {
  none,
  scaledgd,      // SGD increments through the opposite-Gram preconditioner, undamped (δ = 0)
  rpgd,          // the same with (· + δI)⁻¹, δ = --rp-delta
  lora_rite,     // LoRA-RITE on each pair (its own state; the core rule is not used)
  lora_pro,      // SGD on LoRA-Pro's adjusted gradients (δ = --pro-delta)
  circuit_muon,  // Muon's increments, then the per-head V/O trace rebalance (λ = --circuit-lambda)
};

struct DiagRule {
  const char* name;          // --rules value; the log's rule column
  core::RuleKind kind;       // the core rule behind the increments
  RuleWarmth warmth;
  PairStep pair;
  const char* invariance;    // what its source states (the core rule's row for the base rules)
};

/// Every rule, in --help's order.
const std::vector<DiagRule>& diag_rules();
/// The row of `name`; throws io::UsageError naming the rules when there is none.
const DiagRule& diag_rule(std::string_view name);
/// Every name, in table order (the --rules choices).
std::vector<std::string> diag_rule_names();

}  // namespace gaugelab::harness
