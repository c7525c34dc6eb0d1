// Update rules (DESIGN §3, seed 003 §3–§6): one runtime-selectable rule type, the per-matrix
// dispatcher, and the factor-pair drivers that produce raw increments (U_A, U_B) for M = A·Bᵀ.
//
//   rule       file                    raw increment U for W [m, n] with gradient G
//   sgd        update_sgd.hpp          −ηG
//   momentum   update_sgd.hpp          −η·buf (heavy-ball) or −η(G + μ·buf) (Nesterov)
//   adamw      update_adamw.hpp        −η·m̂ ⊘ (√v̂ + ε)               (torch.optim.AdamW)
//   muon       update_muon.hpp         −η·√max(1, m/n)·NS5(Nesterov momentum)  (KellerJordan/Muon)
//   hyperball  update_hyperball.hpp    −ηR·Ũ/‖Ũ‖_F, then retraction onto ‖W‖_F = R
//
// Every rule returns Step{U, ρ, radius}: W ← ρW + U (decoupled decay, seed 003 §4), then the
// Hyperball retraction when radius > 0. Quotient wrappers (quotient.hpp) act on U between
// step_pair and apply_pair.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "core/update_base_rules.hpp"
#include "core/update_rule_table.hpp"
#include "core/update_hyperball.hpp"

namespace gaugelab::core {

/// Options of one rule; the alternative held selects the rule.
using RuleOptions = std::variant<SgdOptions, MomentumOptions, AdamWOptions, MuonOptions, HyperballOptions>;

/// The rule's options with every default (see each options struct).
inline RuleOptions default_rule_options(RuleKind k) {
  switch (k) {
    case RuleKind::sgd: return SgdOptions{};
    case RuleKind::momentum: return MomentumOptions{};
    case RuleKind::adamw: return AdamWOptions{};
    case RuleKind::muon: return MuonOptions{};
    case RuleKind::hyperball: return HyperballOptions{};
  }
  throw std::invalid_argument("default_rule_options: bad RuleKind");
}

// rule_kind() relies on the variant's alternatives being listed in RuleKind order.
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(RuleKind::sgd), RuleOptions>, SgdOptions> &&
              std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(RuleKind::momentum), RuleOptions>, MomentumOptions> &&
              std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(RuleKind::adamw), RuleOptions>, AdamWOptions> &&
              std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(RuleKind::muon), RuleOptions>, MuonOptions> &&
              std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(RuleKind::hyperball), RuleOptions>, HyperballOptions>);

/// Which rule the options select.
inline RuleKind rule_kind(const RuleOptions& r) { return static_cast<RuleKind>(r.index()); }

/// One step of `rule` for W [m, n] with gradient G [m, n]; updates the rule's state.
template <class T>
Step<T> propose(const RuleOptions& rule, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/, RuleState<T>& st) {
  return std::visit(
      [&](const auto& o) -> Step<T> {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, HyperballOptions>) return hyperball_step(o, W, G, st);
        else return propose_base<T>(BaseRuleOptions(o), W, G, st);
      },
      rule);
}

/// Optimizer state of a factor pair (one RuleState per factor).
template <class T>
struct PairState {
  RuleState<T> a;  // state of A [m, r]
  RuleState<T> b;  // state of B [n, r]
};

/// Steps proposed for both factors: A ← ρ_A·A + U_A, B ← ρ_B·B + U_B (seed 003 §4).
template <class T>
struct PairStep {
  Step<T> a;  // U [m, r], ρ_A, radius_A
  Step<T> b;  // U [n, r], ρ_B, radius_B
};

/// Raw increments of a factor pair from its gradients, with a separate rule per factor (e.g.
/// independent shrink ρ_A ≠ ρ_B as in seed 003 §6).
template <class T>
PairStep<T> step_pair(const RuleOptions& rule_a, const RuleOptions& rule_b, const Mat<T>& A /*[m, r]*/,
                      const Mat<T>& B /*[n, r]*/, const Mat<T>& G_A /*[m, r]*/, const Mat<T>& G_B /*[n, r]*/,
                      PairState<T>& st) {
  if (A.cols() != B.cols())
    throw std::invalid_argument("step_pair: A has " + std::to_string(A.cols()) + " columns but B has " +
                                std::to_string(B.cols()) + "; a factor pair shares its inner dimension r");
  return {propose(rule_a, A, G_A, st.a), propose(rule_b, B, G_B, st.b)};
}

/// Raw increments of a factor pair, same rule for both factors.
template <class T>
PairStep<T> step_pair(const RuleOptions& rule, const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/,
                      const Mat<T>& G_A /*[m, r]*/, const Mat<T>& G_B /*[n, r]*/, PairState<T>& st) {
  return step_pair(rule, rule, A, B, G_A, G_B, st);
}

/// Applies both steps in place: A ← ρ_A·A + U_A, B ← ρ_B·B + U_B (plus any Hyperball retraction).
template <class T>
void apply_pair(Mat<T>& A /*[m, r]*/, Mat<T>& B /*[n, r]*/, const PairStep<T>& s) {
  apply_step(A, s.a);
  apply_step(B, s.b);
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_RULES_INSTANCES(EXTERN, T) \
  EXTERN template Step<T> propose<T>(const RuleOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&); \
  EXTERN template PairStep<T> step_pair<T>(const RuleOptions&, const RuleOptions&, const Mat<T>&, const Mat<T>&, \
      const Mat<T>&, const Mat<T>&, PairState<T>&); \
  EXTERN template PairStep<T> step_pair<T>(const RuleOptions&, const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, \
      PairState<T>&); \
  EXTERN template void apply_pair<T>(Mat<T>&, Mat<T>&, const PairStep<T>&);
GAUGELAB_CORE_UPDATE_RULES_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_RULES_INSTANCES(extern, double)

}  // namespace gaugelab::core
