// The hook registry (hook_registry.hpp): one row per hook kind.
#include "gpt2/train/hook_registry.hpp"

#include <cstdio>
#include <stdexcept>

#include "gpt2/train/api.hpp"

namespace gaugelab::gpt2 {

namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

const std::vector<StepHookRow>& step_hook_rows() {
  using K = StepHookKind;
  static const std::vector<StepHookRow> rows = {
      {K::gauge_fix, "gauge_fix", {"gaugefix-every", "gaugefix-mode", "gaugefix-vo", "gaugefix-eps"},
       [](const TrainOptions& o) {
         return std::string("GaugeFix (") + word(o.gaugefix_mode) + ") every " + std::to_string(o.gaugefix_every) +
                " steps, eps " + num(o.gaugefix_eps) + ", state transport " + word(o.state_transport) +
                (o.gaugefix_vo ? ", V/O too" : "");
       }},
      {K::qk_cap, "qk_cap", {"qk-cap"}, [](const TrainOptions& o) { return "cap s_Q*s_K <= " + num(o.qk_cap); }},
      {K::quotient, "quotient", {"quotient", "quotient-every", "quotient-damping", "quotient-vo", "quotient-scale"},
       [](const TrainOptions& o) {
         return std::string("quotient-aware attention updates (") + word(o.quotient) +
                (o.quotient == QuotientGram::full && o.quotient_every > 1
                     ? " every " + std::to_string(o.quotient_every) + " steps, diagonal between"
                     : std::string()) +
                ", damping " + num(o.quotient_damping) + (o.quotient_vo ? ", Q/K and V/O" : ", Q/K only") +
                (o.quotient_scale == QuotientScale::rms ? ", each head's pair at its raw increments' RMS)" : ")");
       }},
      {K::qk_clip, "qk_clip", {"qk-clip-tau", "qk-clip-on"},
       [](const TrainOptions& o) {
         return "QK-Clip at tau " + num(o.qk_clip_tau) + " on the " + word(o.qk_clip_on) + " after every step";
       }},
  };
  return rows;
}

const StepHookRow& step_hook_row(StepHookKind kind) {
  for (const StepHookRow& r : step_hook_rows())
    if (r.kind == kind) return r;
  throw std::logic_error("step hook kind without a registry row");
}

}  // namespace gaugelab::gpt2
