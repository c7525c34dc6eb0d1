#include "harness/diag_rules.hpp"

#include <stdexcept>
#include <string>

#include "core/eigen_products.hpp"
#include "core/update_factor_literature.hpp"
#include "core/update_factor_precond.hpp"
#include "harness/diag_options.hpp"

namespace gaugelab::harness {

namespace {

// The core rule's options at unit lr and no decay, its hyper-parameters from the options.
core::RuleOptions options_for(const DiagRule& rule, const DiagOptions& o) {
  switch (rule.kind) {
    case core::RuleKind::sgd: return core::SgdOptions{1.0, 0.0};
    case core::RuleKind::momentum: {
      core::MomentumOptions m;
      m.lr = 1.0;
      m.momentum = o.momentum;
      return m;
    }
    case core::RuleKind::adamw: {
      core::AdamWOptions a;
      a.lr = 1.0;
      a.beta1 = o.beta1;
      a.beta2 = o.beta2;
      a.eps = o.adam_eps;
      a.weight_decay = 0.0;
      return a;
    }
    case core::RuleKind::muon: {
      core::MuonOptions m;
      m.lr = 1.0;
      m.momentum = o.muon_momentum;
      return m;
    }
    case core::RuleKind::hyperball: {
      core::HyperballOptions h;
      h.lr = 1.0;
      return h;
    }
  }
  throw std::invalid_argument(std::string("options_for: bad rule kind of ") + rule.name);
}

double pair_param_for(PairStep p, const DiagOptions& o) {
  switch (p) {
    case PairStep::rpgd: return o.rp_delta;
    case PairStep::lora_pro: return o.pro_delta;
    case PairStep::circuit_muon: return o.circuit_lambda;
    default: return 0.0;
  }
}

}  // namespace

std::vector<RuleVariant> rule_variants(const DiagOptions& o) {
  std::vector<RuleVariant> out;
  for (const auto& r : o.rules) {
    const DiagRule& row = diag_rule(r);
    const core::RuleOptions opts = options_for(row, o);
    std::vector<std::string> modes;  // one variant per transport mode of a warmed-up state
    if (row.warmth == RuleWarmth::momentum)
      modes = o.momentum_transport == "each" ? o.transports : std::vector<std::string>{o.momentum_transport};
    else if (row.warmth == RuleWarmth::transports)
      modes = o.transports;
    if (row.warmth == RuleWarmth::fresh) {
      RuleVariant v{r, "-", false, row.kind == core::RuleKind::hyperball, opts, core::TransportMode::none};
      v.pair = row.pair;
      v.pair_param = pair_param_for(row.pair, o);
      out.push_back(std::move(v));
      continue;
    }
    for (const auto& t : modes) out.push_back({r, t, true, false, opts, core::parse_transport_mode(t)});
  }
  return out;
}

HeadFactors propose_head(const RuleVariant& v, const HeadFactors& p, const HeadFactors& g, HeadStates& st) {
  HeadFactors u;
  if (v.pair == PairStep::lora_rite) {  // both pairs' unmagnified gradients, then each pair's step (states per factor)
    core::RiteOptions ro;
    ro.clip_unmagnified = 0, ro.update_skipping = 0;
    for (int k = 0; k < 2; ++k) {
      const auto un = core::rite_unmagnify<double>(p[2 * k], p[2 * k + 1], g[2 * k], g[2 * k + 1], ro);
      auto d = core::rite_increments(un, st[static_cast<std::size_t>(2 * k)], st[static_cast<std::size_t>(2 * k + 1)], ro);
      u[2 * k] = std::move(d.U_A);
      u[2 * k + 1] = std::move(d.U_B);
    }
    return u;
  }
  if (v.pair == PairStep::lora_pro) {  // SGD on the adjusted gradients
    for (int k = 0; k < 2; ++k) {
      const auto a = core::lora_pro_gradients<double>(p[2 * k], p[2 * k + 1], g[2 * k], g[2 * k + 1], v.pair_param);
      u[2 * k] = -a.U_A;
      u[2 * k + 1] = -a.U_B;
    }
    return u;
  }
  for (int i = 0; i < kFactors; ++i) {
    auto& s = st[static_cast<std::size_t>(i)];
    if (i == kVB) {  // the rule sees W_o [r, d]
      const Mat<double> w = p[i].transpose(), gw = g[i].transpose();
      u[i] = core::propose(v.options, w, gw, s).U.transpose();
    } else {
      u[i] = core::propose(v.options, p[i], g[i], s).U;
    }
  }
  if (v.pair == PairStep::circuit_muon) {  // Muon's increments, then the V/O pair rebalanced (W_O's columns = p[kVB])
    auto d = core::vo_trace_rebalance<double>(p[kVA], p[kVB], u[kVA], u[kVB], v.pair_param, /*whiten=*/true);
    u[kVA] = std::move(d.U_A);
    u[kVB] = std::move(d.U_B);
  }
  if (v.pair == PairStep::scaledgd || v.pair == PairStep::rpgd) {  // the pair's SGD increments, preconditioned
    for (int k = 0; k < 2; ++k) {
      auto pu = core::riemannian_preconditioned(p[2 * k], p[2 * k + 1], u[2 * k], u[2 * k + 1],
                                                v.pair == PairStep::rpgd ? v.pair_param : 0.0);
      u[2 * k] = std::move(pu.U_A);
      u[2 * k + 1] = std::move(pu.U_B);
    }
  }
  return u;
}

HeadStates warm_states(const RuleVariant& v, const HeadFactors& at, const std::vector<HeadFactors>& grads) {
  HeadStates st{};
  if (!v.warm) return st;
  for (const auto& g : grads) (void)propose_head(v, at, g, st);
  return st;
}

void transport_states(HeadStates& st, const Mat<double>& S, const Mat<double>& T, core::TransportMode mode) {
  if (mode == core::TransportMode::none) return;
  core::TransportOptions o;
  o.mode = mode;
  o.keep_second_moment_for_general_gauge = true;  // v untouched for non-diagonal gauges (see header)
  core::transport_pair_state(st[kQA], st[kQB], S, o);
  core::transport_state(st[kVA], T, core::GaugeSide::right, o);
  core::transport_state(st[kVB], T, core::GaugeSide::left, o);  // W_o → T⁻¹·W_o
}

}  // namespace gaugelab::harness
