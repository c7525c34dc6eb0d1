// The per-step hooks of the training conditions (conditions.hpp StepHookKind): what a condition does
// around the optimizer's step. The loop (loop.cpp) calls every hook of its condition at three points:
//   before_update   before the optimizer's step (a snapshot the correction needs)
//   correct_update  right after it: part of the step (the update-to-weight ratios see it)
//   after_update    after the ratios: a move of the point (a gauge fix, a cap, a clip); returns true when
//                   it changed the parameters (the log row's after_fix)
// One file per hook (its name, flags and description: one row of hook_registry.hpp): hook_gauge_fix.cpp (gauge_fix, qk_cap),
// hook_quotient.cpp (quotient), hook_qk_clip.cpp (qk_clip).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/conditions.hpp"
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

/// The hook of one kind, made by its hook file's constructor.
std::unique_ptr<StepHook> make_step_hook(StepHookKind kind, const TrainOptions& o);
/// The hooks of `c`, in its order.
std::vector<std::unique_ptr<StepHook>> make_step_hooks(const Condition& c, const TrainOptions& o);

}  // namespace gaugelab::gpt2
