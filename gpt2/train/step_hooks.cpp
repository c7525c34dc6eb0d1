#include "gpt2/train/step_hooks.hpp"

#include "gpt2/train/hook_gauge_fix.hpp"
#include "gpt2/train/hook_qk_clip.hpp"
#include "gpt2/train/hook_quotient.hpp"

namespace gaugelab::gpt2 {

std::unique_ptr<StepHook> make_step_hook(StepHookKind kind, const TrainOptions& o) {
  switch (kind) {  // each kind's constructor, in its hook file (hook_registry.hpp holds the rest of its row)
    case StepHookKind::gauge_fix: return make_gauge_fix_hook(o);
    case StepHookKind::qk_cap: return make_qk_cap_hook(o);
    case StepHookKind::quotient: return make_quotient_hook(o);
    case StepHookKind::qk_clip: return make_qk_clip_hook(o);
  }
  return nullptr;
}

std::vector<std::unique_ptr<StepHook>> make_step_hooks(const Condition& c, const TrainOptions& o) {
  std::vector<std::unique_ptr<StepHook>> hooks;
  for (const StepHookKind kind : c.hooks) hooks.push_back(make_step_hook(kind, o));
  return hooks;
}

}  // namespace gaugelab::gpt2
