// The per-step hooks of a condition, made from its row (conditions.hpp Condition::hooks), each by its hook file's
// constructor: hook_gauge_fix.hpp (gauge_fix, qk_cap), hook_quotient.hpp (quotient), hook_qk_clip.hpp (qk_clip).
// The interface they share: step_hook.hpp; their names, flags and descriptions: step_hook_kinds.def, read by
// hook_registry.hpp.
#pragma once

#include <memory>
#include <vector>

#include "gpt2/train/conditions.hpp"
#include "gpt2/train/step_hook.hpp"

namespace gaugelab::gpt2 {

/// The hook of one kind, made by its hook file's constructor.
std::unique_ptr<StepHook> make_step_hook(StepHookKind kind, const TrainOptions& o);
/// The hooks of `c`, in its order.
std::vector<std::unique_ptr<StepHook>> make_step_hooks(const Condition& c, const TrainOptions& o);

}  // namespace gaugelab::gpt2
