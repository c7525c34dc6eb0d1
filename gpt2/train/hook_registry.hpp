// The per-step hooks of the training conditions as one registry: each row is a hook kind's name, its flags (refused
// without a condition that runs it) and its part of the settings line. The rows are written once, in
// step_hook_kinds.def, and read here (the enum StepHookKind), in hook_registry.cpp (step_hook_rows()) and in
// step_hooks.cpp (make_step_hook: each kind's constructor). Every place that handles hooks iterates these rows: the
// conditions table names their kinds (conditions.hpp Condition::hooks), the options gate their flags (options.cpp),
// describe_condition prints them, the torch library lists them (torch_library/register_ops.cpp: step_hooks(),
// conditions()) and gaugelab.torch's attach checks each name it is given against the ones it runs
// (python/gaugelab/torch/optim.py). tests/train/test_train_hook_registry.cpp checks that every row is reachable from
// each.
//
// The rows are LibTorch-free and compiled into the torch library too (gpt2/CMakeLists.txt's shared sources), which
// does not link the hooks: the constructors, which need the model, are named by the row and defined in the hook files,
// and only make_step_hook (step_hooks.cpp, in the trainer's library) calls them.
//
// Adding a hook kind: one file, one row, one test.
//   1. hook_<id>.cpp with hook_<id>.hpp: the StepHook (before_update / correct_update / after_update,
//      step_hook.hpp) and its constructor std::unique_ptr<StepHook> make_<id>_hook(const TrainOptions&);
//   2. its row in step_hook_kinds.def: GAUGELAB_STEP_HOOK(id, (the flags it reads), its describe function); the enum,
//      the registry row and make_step_hook's case follow from it, and a condition row then lists StepHookKind::id
//      among its hooks;
//   3. a test of what the hook does (tests/train/test_train_<id>.cpp); test_train_hook_registry.cpp covers its
//      reachability without a change, and gaugelab.torch's attach refuses the name until optim.py runs it.
#pragma once

#include <string>
#include <vector>

namespace gaugelab::gpt2 {

struct TrainOptions;

/// What runs around the optimizer's step for a condition (conditions.hpp Condition::hooks): each kind is one row
/// of step_hook_kinds.def, in its order.
enum class StepHookKind {
#define GAUGELAB_STEP_HOOK(id, flags, ...) id,
#include "gpt2/train/step_hook_kinds.def"
#undef GAUGELAB_STEP_HOOK
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
