#include "gpt2/train/step_hooks.hpp"

namespace gaugelab::gpt2 {

std::vector<std::unique_ptr<StepHook>> make_step_hooks(const Condition& c, const TrainOptions& o) {
  std::vector<std::unique_ptr<StepHook>> hooks;
  for (const StepHookKind kind : c.hooks) {
    switch (kind) {
      case StepHookKind::gauge_fix: hooks.push_back(make_gauge_fix_hook(o)); break;
      case StepHookKind::qk_cap: hooks.push_back(make_qk_cap_hook(o)); break;
      case StepHookKind::quotient: hooks.push_back(make_quotient_hook(o)); break;
      case StepHookKind::qk_clip: hooks.push_back(make_qk_clip_hook(o)); break;
    }
  }
  return hooks;
}

}  // namespace gaugelab::gpt2
