// The per-step hooks of the training conditions as one registry: each row is a hook kind's name, its flags (refused
// without a condition that runs it) and its part of the settings line. Every place that handles hooks iterates these
// rows: the conditions table names their kinds (conditions.hpp Condition::hooks), the options gate their flags
// (options.cpp), describe_condition prints them, the torch library lists them (torch_library/register_ops.cpp:
// step_hooks(), conditions()) and gaugelab.torch's attach checks each name it is given against the ones it runs
// (python/gaugelab/torch/optim.py). make_step_hooks (step_hooks.cpp) builds each kind with its hook file's
// constructor. tests/train/test_train_hook_registry.cpp checks that every row is reachable from each.
//
// The rows are LibTorch-free and compiled into the torch library too (gpt2/CMakeLists.txt's shared sources), so the
// constructors, which need the model, stay with the hooks: one file per hook.
//
// Adding a hook kind: one file, one row, one test.
//   1. hook_<name>.cpp with hook_<name>.hpp: the StepHook (before_update / correct_update / after_update,
//      step_hook.hpp) and its constructor make_<name>_hook(const TrainOptions&), called from make_step_hook
//      (step_hooks.cpp, one case);
//   2. its kind in StepHookKind (below) and its row in step_hook_rows() (hook_registry.cpp): name, the flags it
//      reads, its describe function; a condition row then lists the kind among its hooks;
//   3. a test of what the hook does (tests/train/test_train_<name>.cpp); test_train_hook_registry.cpp covers its
//      reachability without a change, and gaugelab.torch's attach refuses the name until optim.py runs it.
#pragma once

#include <string>
#include <vector>

namespace gaugelab::gpt2 {

struct TrainOptions;

/// What runs around the optimizer's step for a condition (conditions.hpp Condition::hooks): each kind is one row
/// of step_hook_rows() and one hook file.
enum class StepHookKind {
  gauge_fix,  // GaugeFix every --gaugefix-every steps (--gaugefix-mode, --gaugefix-vo, --state-transport)
  qk_cap,     // after the fix: each head's s_Q·s_K capped at --qk-cap (magnitude control, not a gauge move)
  quotient,   // the step's attention increments corrected by the opposite Gram (--quotient*)
  qk_clip,    // Kimi K2's QK-Clip: heads whose largest logit exceeds --qk-clip-tau rescaled (qk_clip.hpp)
};

struct StepHookRow {
  StepHookKind kind;
  const char* name;                  // "gauge_fix": the conditions' JSON, the torch library, gaugelab.torch
  std::vector<const char*> flags;    // the flags it reads: given without a condition that runs it, refused
  std::string (*describe)(const TrainOptions& o);  // its part of the condition's settings line
};

/// Every hook kind, in StepHookKind's order.
const std::vector<StepHookRow>& step_hook_rows();
/// The row of `kind`.
const StepHookRow& step_hook_row(StepHookKind kind);

}  // namespace gaugelab::gpt2
