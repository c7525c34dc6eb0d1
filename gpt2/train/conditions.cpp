#include "gpt2/train/conditions.hpp"

#include <nlohmann/json.hpp>

#include "gpt2/train/api.hpp"
#include "gpt2/train/hook_registry.hpp"
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
       {{"multipliers", "none"}, {"grad-projection", "exact"}, {"projection-target", "gradient"}}, false, false, {}, "N",
       {core::RuleKind::adamw}},  // the grids run the projections under AdamW only
      {"Pa", "Pa: N + Alg. 2 gradient projection", "attention gradients projected by seed 001 Alg. 2",
       {{"multipliers", "none"}, {"grad-projection", "approx"}, {"projection-target", "gradient"}}, false, false, {}, "N",
       {core::RuleKind::adamw}},  // the grids run the projections under AdamW only
      {"Pu", "Pu: N + exact projection of the update", "the optimizer's attention update made gauge-orthogonal",
       {{"multipliers", "none"}, {"grad-projection", "exact"}, {"projection-target", "update"}}, false, false, {}, "N",
       {core::RuleKind::adamw}},  // the grids run the projections under AdamW only
      {"Pau", "Pau: N + Alg. 2 projection of the update", "the optimizer's attention update projected by Alg. 2",
       {{"multipliers", "none"}, {"grad-projection", "approx"}, {"projection-target", "update"}}, false, false, {}, "N",
       {core::RuleKind::adamw}},  // the grids run the projections under AdamW only
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

ConditionLabel condition_label(const Condition& c, const TrainOptions& o) {
  const bool muon = o.optimizer == core::RuleKind::muon, offset = o.qk_gauge_init > 0;
  const std::string prefix = std::string(offset ? "o" : "") + (muon ? "M" : "");
  ConditionLabel l;
  l.key = c.key;
  l.label = prefix + c.key;
  l.title = std::string(muon ? "Muon, " : "") + c.title + (offset ? ", offset start" : "");
  l.reference = *c.compared_with ? prefix + c.compared_with : std::string();
  l.index = static_cast<int>(&c - table().data());
  return l;
}

std::string conditions_json() {
  nlohmann::json rows = nlohmann::json::array();
  for (const Condition& c : table()) {
    nlohmann::json bundle = nlohmann::json::object(), hooks = nlohmann::json::array(),
                   optimizers = nlohmann::json::array();
    for (const FlagValue& f : c.bundle) bundle[f.flag] = f.value;
    for (const StepHookKind h : c.hooks) hooks.push_back(step_hook_row(h).name);
    for (const core::RuleKind k : c.optimizers) optimizers.push_back(word(k));
    rows.push_back({{"key", c.key}, {"title", c.title}, {"acts_on", c.acts_on}, {"bundle", bundle},
                    {"decays_qk", c.decays_qk}, {"needs_qk_rows", c.needs_qk_rows}, {"hooks", hooks},
                    {"compared_with", c.compared_with}, {"optimizers", optimizers}});
  }
  return rows.dump();
}

std::string describe_condition(const Condition& c, const TrainOptions& o) {
  std::string s = std::string(c.title) + ": " + c.acts_on + "; " +
                  (c.decays_qk ? "WD on every multiplier, Q/K included" : "no Q/K multiplier WD");
  for (const StepHookKind h : c.hooks) s += "; " + step_hook_row(h).describe(o);
  if (!c.bundle.empty()) {
    s += " (sets";
    for (const FlagValue& f : c.bundle) s += std::string(" --") + f.flag + " " + f.value;
    s += ")";
  }
  return s;
}

}  // namespace gaugelab::gpt2
