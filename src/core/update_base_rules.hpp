// The four base update rules (SGD, momentum, AdamW, Muon) behind one runtime-selectable options type.
//
// Hyperball (update_hyperball.hpp) takes its proposed direction from one of these, and the full
// rule set (update_rules.hpp) adds Hyperball on top.
#pragma once

#include <type_traits>
#include <variant>

#include "core/update_adamw.hpp"
#include "core/update_muon.hpp"
#include "core/update_sgd.hpp"

namespace gaugelab::core {

/// Options of one base rule; the alternative held selects the rule.
using BaseRuleOptions = std::variant<SgdOptions, MomentumOptions, AdamWOptions, MuonOptions>;

/// One step of the base rule held in `rule`, for W [m, n] with gradient G [m, n].
template <class T>
Step<T> propose_base(const BaseRuleOptions& rule, const Mat<T>& W /*[m, n]*/, const Mat<T>& G /*[m, n]*/,
                     RuleState<T>& st) {
  return std::visit(
      [&](const auto& o) -> Step<T> {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, SgdOptions>) return sgd_step(o, W, G, st);
        else if constexpr (std::is_same_v<O, MomentumOptions>) return momentum_step(o, W, G, st);
        else if constexpr (std::is_same_v<O, AdamWOptions>) return adamw_step(o, W, G, st);
        else return muon_step(o, W, G, st);
      },
      rule);
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_BASE_RULES_INSTANCES(EXTERN, T) \
  EXTERN template Step<T> propose_base<T>(const BaseRuleOptions&, const Mat<T>&, const Mat<T>&, RuleState<T>&);
GAUGELAB_CORE_UPDATE_BASE_RULES_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_BASE_RULES_INSTANCES(extern, double)

}  // namespace gaugelab::core
