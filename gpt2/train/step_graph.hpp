// One micro-step (forward, loss, gradients) captured once as a CUDA graph and replayed for every micro-step
// after it (--cuda-graph on): the ~800 kernel launches of a GPT-2 124M micro-step become one, so the host no
// longer paces a launch-bound step (with multipliers on an H200: 2777 device events per 2 steps, the device busy
// 47 % of the span). What stays outside the graph, eager as before: the batch's copy into the graph's input
// buffers, the data-parallel averaging, clipping, the optimizer, every condition's hook, evaluation and logging.
// The gradients are summed into static buffers the parameters' .grad point at (a parameter the loss does not
// reach keeps no gradient, as in the eager step). Every real micro-step, the first included, is a replay: the
// warm-up passes before the capture are discarded, so a resumed run replays the same kernels as the run it
// continues. A parameter whose storage moved since the capture (a hook that replaced a tensor) triggers a new
// capture, never a replay on stale addresses; the captured loss has its own workspace (an eager loss, e.g. an
// evaluation, may grow the model's). A micro-step of another shape runs eagerly, its gradients taken over by the
// buffers at the next replay.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

class MicroStepGraph {
 public:
  /// Why a run cannot capture its micro-step (one line), or "" when it can: CUDA, no dropout.
  static std::string refusal(const GPT& model, c10::Device device);

  /// params: every trained parameter (the optimizer's); each micro-step's loss is divided by grad_accum.
  MicroStepGraph(GPT& model, std::vector<at::Tensor> params, Precision precision, std::int64_t grad_accum);
  ~MicroStepGraph();
  MicroStepGraph(const MicroStepGraph&) = delete;
  MicroStepGraph& operator=(const MicroStepGraph&) = delete;

  /// One micro-step on inputs, targets [B, T] (int64, on the model's device): adds its gradients to the
  /// parameters' .grad (zeroed first when `first`, the step's first micro-step) and returns its loss (float32
  /// scalar, unscaled, a copy). The first call warms up and captures (again after a parameter's storage moved).
  /// Returns an undefined tensor, and does nothing, when the shape differs from the captured one (the caller runs
  /// that micro-step eagerly). A failure inside the capture ends the capture, drops the partial graph and throws
  /// std::runtime_error with capture_failure(step, its first line): one line, naming the run's `step` (1-based).
  at::Tensor run(const at::Tensor& inputs, const at::Tensor& targets, bool first, std::int64_t step);

  /// "CUDA graph capture failed at step S (what): rerun with --cuda-graph off".
  static std::string capture_failure(std::int64_t step, const std::string& what);

 private:
  struct State;
  void capture(const at::Tensor& inputs, const at::Tensor& targets, std::int64_t step);
  bool stale() const;
  GPT& model_;
  std::vector<at::Tensor> params_;
  Precision precision_;
  std::int64_t grad_accum_;
  std::unique_ptr<State> s_;
};

}  // namespace gaugelab::gpt2
