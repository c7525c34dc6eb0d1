#include "harness/diag_rule_table.hpp"

#include <string>

#include "io/options.hpp"

namespace gaugelab::harness {

namespace {

using K = core::RuleKind;
using W = RuleWarmth;
using P = PairStep;

const char* core_invariance(K k) { return core::rule_row(k).invariance.data(); }

}  // namespace

const std::vector<DiagRule>& diag_rules() {
  static const std::vector<DiagRule> rows = {
      {"sgd", K::sgd, W::fresh, P::none, core_invariance(K::sgd)},
      {"momentum", K::momentum, W::momentum, P::none, core_invariance(K::momentum)},
      {"adamw", K::adamw, W::fresh, P::none, core_invariance(K::adamw)},
      {"adamw-warm", K::adamw, W::transports, P::none, "§7: state must move with the gauge"},
      {"muon", K::muon, W::fresh, P::none, core_invariance(K::muon)},
      {"hyperball", K::hyperball, W::fresh, P::none, core_invariance(K::hyperball)},
      // the literature's rules: the invariance each source states (core/update_factor_literature.hpp, _precond.hpp)
      {"scaledgd", K::sgd, W::fresh, P::scaledgd, "source: GL(r)-invariant (= sgd + full)"},
      {"rpgd", K::sgd, W::fresh, P::rpgd, "source: invariant while δ ≪ the Grams"},
      {"lora-rite", K::sgd, W::fresh, P::lora_rite, "source: GL(r)-invariant at every step"},
      {"lora-pro", K::sgd, W::fresh, P::lora_pro, "source: equivalent gradient invariant"},
      {"circuit-muon", K::muon, W::fresh, P::circuit_muon, "source: rebalances the scalar V/O direction only"},
  };
  return rows;
}

const DiagRule& diag_rule(std::string_view name) {
  for (const DiagRule& r : diag_rules())
    if (name == r.name) return r;
  std::string known;
  for (const DiagRule& r : diag_rules()) known += (known.empty() ? "" : ", ") + std::string(r.name);
  throw io::UsageError("unknown rule '" + std::string(name) + "' (rules: " + known + ")");
}

std::vector<std::string> diag_rule_names() {
  std::vector<std::string> out;
  for (const DiagRule& r : diag_rules()) out.emplace_back(r.name);
  return out;
}

}  // namespace gaugelab::harness
