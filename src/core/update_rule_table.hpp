// The update-rule table (no Eigen here: the trainer's LibTorch files include it): every rule's kind,
// name and the gauge invariance its step has. update_rules.hpp dispatches on the kind; the harness's
// diag rules (harness/diag_rule_table.hpp) are built on these rows; the trainer's parameter groups step
// by one of them (gpt2/train/optimizer.hpp: adamw, or muon for the hidden matrices).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gaugelab::core {

enum class RuleKind { sgd, momentum, adamw, muon, hyperball };

/// A family of gauges S [r, r] acting on a factor pair (A, B) -> (AS, BS⁻ᵀ), M = ABᵀ unchanged.
enum class GaugeClass {
  orthogonal,          // S ∈ O(r)
  signed_permutation,  // S a permutation with signs: the coordinatewise rules' symmetry
};

/// The update-rule table: one row per rule, read by the core, the harness (diag_rule_table.hpp builds
/// its literature rules on these) and the trainer (its parameter groups step by adamw or muon).
struct RuleRow {
  RuleKind kind;
  std::string_view name;        // as flags and logs spell it
  std::string_view invariance;  // the gauge invariance its step has, as seed 003 states it (§ of seed 003)
  // The largest of the GaugeClass families under which one step (fresh state) moves the represented product M
  // the same from every representative; under a general (non-orthogonal) gauge none of them does.
  // tests/core/test_update_rule_table.cpp checks both for every row.
  GaugeClass motion_invariant_under;
};
inline constexpr RuleRow kRuleTable[] = {
    {RuleKind::sgd, "sgd", "§3: exposes AAᵀ, BBᵀ — grows with κ", GaugeClass::orthogonal},
    {RuleKind::momentum, "momentum", "§7: first moments move with the gauge", GaugeClass::orthogonal},
    {RuleKind::adamw, "adamw", "§6: coordinatewise scale only", GaugeClass::signed_permutation},
    {RuleKind::muon, "muon", "§6: orthogonal only; anisotropic explodes", GaugeClass::orthogonal},
    {RuleKind::hyperball, "hyperball", "§5: radial control ≠ factor balance", GaugeClass::orthogonal},
};

/// Parses "sgd|momentum|adamw|muon|hyperball"; throws std::invalid_argument naming the value.
inline RuleKind parse_rule_kind(std::string_view s) {
  std::string known;
  for (const RuleRow& r : kRuleTable) {
    if (r.name == s) return r.kind;
    known += (known.empty() ? "" : "|") + std::string(r.name);
  }
  throw std::invalid_argument("unknown update rule '" + std::string(s) + "' (expected " + known + ")");
}

inline const RuleRow& rule_row(RuleKind k) {
  for (const RuleRow& r : kRuleTable)
    if (r.kind == k) return r;
  throw std::invalid_argument("rule_row: bad RuleKind");
}

inline std::string_view rule_kind_name(RuleKind k) { return rule_row(k).name; }

}  // namespace gaugelab::core
