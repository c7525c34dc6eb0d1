#include "gpt2/train/step_hooks.hpp"

namespace gaugelab::gpt2 {

// Each kind's constructor, make_<id>_hook, defined in its hook file (qk_cap's in hook_gauge_fix.cpp, which it
// shares). The hook headers are not included, so a new kind adds no line here; a constructor whose signature
// differs from this declaration is an undefined reference when the trainer links.
#define GAUGELAB_STEP_HOOK(id, flags, ...) std::unique_ptr<StepHook> make_##id##_hook(const TrainOptions& o);
#include "gpt2/train/step_hook_kinds.def"
#undef GAUGELAB_STEP_HOOK

std::unique_ptr<StepHook> make_step_hook(StepHookKind kind, const TrainOptions& o) {
  switch (kind) {  // one case per row of step_hook_kinds.def
#define GAUGELAB_STEP_HOOK(id, flags, ...) \
  case StepHookKind::id: return make_##id##_hook(o);
#include "gpt2/train/step_hook_kinds.def"
#undef GAUGELAB_STEP_HOOK
  }
  return nullptr;
}

std::vector<std::unique_ptr<StepHook>> make_step_hooks(const Condition& c, const TrainOptions& o) {
  std::vector<std::unique_ptr<StepHook>> hooks;
  for (const StepHookKind kind : c.hooks) hooks.push_back(make_step_hook(kind, o));
  return hooks;
}

}  // namespace gaugelab::gpt2
