#include "gpt2/train/conditions.hpp"

#include <cstdio>

#include "gpt2/train/api.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace {

using H = StepHookKind;

// The rows. Seed 000 §4.1 gives A, B, C; §5 proposes D; seed 003 §3, §7 gives E; seed 001 Alg. 2 and
// Remark 51 give the projections (compared with N, the same model without multipliers); QK-norm is the
// practitioners' architecture fix (Wortsman et al. 2023) and QK-Clip the literature's clip of the logits
// themselves (Kimi K2, arXiv 2507.20534 §2.1).
const std::vector<Condition>& table() {
  static const std::vector<Condition> rows = {
      {"A", "A: WD on Q/K", "Q/K multipliers decayed by lambda_lrm like every multiplier (not a gauge move)",
       {}, true, false, {}, ""},
      {"B", "B: GaugeFix", "per-head Q/K multiplier gauge (R+)^h, moved to s_Q = s_K (function kept)",
       {}, false, true, {H::gauge_fix}, "A"},
      {"C", "C: no control", "nothing: no Q/K multiplier decay, no fix", {}, false, false, {}, "A"},
      {"D", "D: GaugeFix + Q/K WD", "the Q/K gauge fixed (function kept) and s_Q*s_K decayed by lambda_lrm",
       {{"magnitude", "wd"}}, true, true, {H::gauge_fix}, "A"},
      {"Dcap", "D: GaugeFix + cap", "the Q/K gauge fixed (function kept) and s_Q*s_K capped (logits scaled)",
       {{"magnitude", "cap"}}, false, true, {H::gauge_fix, H::qk_cap}, "A"},
      {"E", "E: quotient-aware updates",
       "each head's Q/K (and V/O) increments corrected by the opposite Gram (the step, not the point)",
       {}, false, false, {H::quotient}, "A"},
      {"Q", "QK-norm (C + RMSNorm)", "architecture: q and k RMS-normalised per head (no parameters)",
       {{"qk-norm", "rms"}}, false, false, {}, "A"},
      {"QKclip", "QK-Clip (C + Kimi K2's clip)",
       "each head whose largest logit on the step's batch exceeds tau has its W_q, W_k rows scaled by "
       "sqrt(tau/max) (logits scaled)",
       {}, false, false, {H::qk_clip}, "A"},
      {"N", "N: no multipliers (nanoGPT)", "nothing: nanoGPT's GPT-2 without multipliers",
       {{"multipliers", "none"}}, false, false, {}, ""},
      {"P", "P: N + exact gradient projection", "attention gradients made gauge-orthogonal (Sylvester, Remark 51)",
       {{"multipliers", "none"}, {"grad-projection", "exact"}, {"projection-target", "gradient"}}, false, false, {}, "N"},
      {"Pa", "Pa: N + Alg. 2 gradient projection", "attention gradients projected by seed 001 Alg. 2",
       {{"multipliers", "none"}, {"grad-projection", "approx"}, {"projection-target", "gradient"}}, false, false, {}, "N"},
      {"Pu", "Pu: N + exact projection of the update", "the optimizer's attention update made gauge-orthogonal",
       {{"multipliers", "none"}, {"grad-projection", "exact"}, {"projection-target", "update"}}, false, false, {}, "N"},
      {"Pau", "Pau: N + Alg. 2 projection of the update", "the optimizer's attention update projected by Alg. 2",
       {{"multipliers", "none"}, {"grad-projection", "approx"}, {"projection-target", "update"}}, false, false, {}, "N"},
      // Rows added later go last, so that a log's condition_index keeps its meaning across versions.
      {"Beff", "B: GaugeFix (effective norms)",
       "per-head Q/K gauge (R+)^h moved to the minimum-norm representative of the effective Q and K maps (equal "
       "norms; function kept)",
       {{"gaugefix-mode", "effective"}}, false, true, {H::gauge_fix}, "A"},
      {"Erms", "E at the raw step size",
       "E's corrected increments rescaled per head, one factor for each Q/K and V/O pair, to the pair's raw RMS",
       {{"quotient-scale", "rms"}}, false, false, {H::quotient}, "A"},
  };
  return rows;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

const std::vector<Condition>& conditions() { return table(); }

const Condition& condition(std::string_view key) {
  for (const Condition& c : table())
    if (key == c.key) return c;
  std::string keys;
  for (const Condition& c : table()) keys += (keys.empty() ? "" : ", ") + std::string(c.key);
  throw io::UsageError("--condition must be one of " + keys + ", not '" + std::string(key) + "'");
}

std::vector<std::string> condition_keys() {
  std::vector<std::string> out;
  for (const Condition& c : table()) out.emplace_back(c.key);
  return out;
}

bool has_hook(const Condition& c, StepHookKind hook) {
  for (const StepHookKind h : c.hooks)
    if (h == hook) return true;
  return false;
}

std::vector<std::string> condition_keys_with(StepHookKind hook) {
  std::vector<std::string> out;
  for (const Condition& c : table())
    if (has_hook(c, hook)) out.emplace_back(c.key);
  return out;
}

std::string key_list(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

ConditionLabel condition_label(const TrainOptions& o) {
  const Condition& c = condition(o.condition);
  const bool muon = o.optimizer == "muon", offset = o.qk_gauge_init > 0;
  const std::string prefix = std::string(offset ? "o" : "") + (muon ? "M" : "");
  ConditionLabel l;
  l.key = c.key;
  l.label = prefix + c.key;
  l.title = std::string(muon ? "Muon, " : "") + c.title + (offset ? ", offset start" : "");
  l.reference = *c.compared_with ? prefix + c.compared_with : std::string();
  l.index = static_cast<int>(&c - table().data());
  return l;
}

std::string describe_condition(const TrainOptions& o) {
  const Condition& c = condition(o.condition);
  std::string s = std::string(c.title) + ": " + c.acts_on + "; " +
                  (c.decays_qk ? "WD on every multiplier, Q/K included" : "no Q/K multiplier WD");
  for (const StepHookKind h : c.hooks) {
    switch (h) {
      case StepHookKind::gauge_fix:
        s += "; GaugeFix (" + o.gaugefix_mode + ") every " + std::to_string(o.gaugefix_every) + " steps, eps " +
             num(o.gaugefix_eps) + ", state transport " + o.state_transport + (o.gaugefix_vo ? ", V/O too" : "");
        break;
      case StepHookKind::qk_cap: s += "; cap s_Q*s_K <= " + num(o.qk_cap); break;
      case StepHookKind::quotient:
        s += "; quotient-aware attention updates (" + o.quotient +
             (o.quotient == "full" && o.quotient_every > 1
                  ? " every " + std::to_string(o.quotient_every) + " steps, diagonal between"
                  : std::string()) +
             ", damping " + num(o.quotient_damping) + (o.quotient_vo ? ", Q/K and V/O" : ", Q/K only") +
             (o.quotient_scale == "rms" ? ", each head's pair at its raw increments' RMS)" : ")");
        break;
      case StepHookKind::qk_clip:
        s += "; QK-Clip at tau " + num(o.qk_clip_tau) + " on the " + o.qk_clip_on + " after every step";
        break;
    }
  }
  if (!c.bundle.empty()) {
    s += " (sets";
    for (const FlagValue& f : c.bundle) s += std::string(" --") + f.flag + " " + f.value;
    s += ")";
  }
  return s;
}

}  // namespace gaugelab::gpt2
