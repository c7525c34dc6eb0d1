// One per-step hook of a training condition (hook_registry.hpp StepHookKind): what a condition does around the
// optimizer's step. The loop (update.cpp apply_update) calls every hook of its condition at three points:
//   before_update   before the optimizer's step (a snapshot the correction needs)
//   correct_update  right after it: part of the step (the update-to-weight ratios see it)
//   after_update    after the ratios: a move of the point (a gauge fix, a cap, a clip); returns true when
//                   it changed the parameters (the log row's after_fix)
// Each hook file (hook_gauge_fix.cpp, hook_quotient.cpp, hook_qk_clip.cpp) derives from StepHook; the hooks of a
// condition are made by step_hooks.hpp.
#pragma once

#include <cstdint>
#include <functional>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/gaugefix.hpp"

namespace gaugelab::gpt2 {

struct StepContext {
  GPT& model;
  const TrainOptions& options;
  std::int64_t it = 0;           // the step's 0-based index (the step is it + 1)
  at::Tensor inputs;             // [B, T] token ids of the step's last micro-batch, on the model's device
  MomentLookup moments;          // the optimizer's Adam moments of a parameter (GaugeFix's transport)
  std::function<void(at::Tensor&)> reduce_max;  // data parallel: elementwise max over the ranks (empty: one process)
};

class StepHook {
 public:
  virtual ~StepHook() = default;
  virtual void before_update(const StepContext&) {}
  virtual void correct_update(const StepContext&) {}
  virtual bool after_update(const StepContext&) { return false; }
};

}  // namespace gaugelab::gpt2
