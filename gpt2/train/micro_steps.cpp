// The step's gradients: the micro-steps (eager, or replays of one captured CUDA graph: step_graph.hpp), the
// hooks' batch, and the mean over the data-parallel ranks.
#include "gpt2/train/micro_steps.hpp"

#include <string>

#include <ATen/TensorOperators.h>
#include <c10/util/Exception.h>

#include "gpt2/train/micro_batch.hpp"

namespace gaugelab::gpt2 {

namespace {

// One micro-step: forward and backward of inputs, targets [B, T]; its loss (unscaled, detached).
at::Tensor micro_step(TrainRun& run, LoopState& loop, const at::Tensor& inputs, const at::Tensor& targets, bool first,
                      std::int64_t step) {
  at::Tensor loss;
  if (loop.graph) loss = loop.graph->run(inputs, targets, first, step);  // undefined: another shape
  if (!loss.defined()) {
    {
      AutocastScope autocast(run.device, run.precision);
      loss = run.model->loss(inputs, targets);
    }
    (loss / static_cast<double>(run.grad_accum)).backward();
  }
  return loss.detach();
}

// A GPU that cannot hold the micro-batch: one line, the flags to lower (micro_batch.hpp words both).
std::runtime_error micro_batch_out_of_memory(const TrainRun& run, const c10::OutOfMemoryError& e, std::int64_t T) {
  const std::string what = e.what_without_backtrace();
  if (run.fit) return fitted_out_of_memory_error(what, run.micro_batch, T, run.options.fit_memory, run.device);
  return out_of_memory_error(what, run.micro_batch, T, run.grad_accum, run.device);
}

}  // namespace

void compute_gradients(TrainRun& run, LoopState& loop, StepWork& s) {
  at::Tensor loss_sum;
  for (std::int64_t micro = 0; micro < run.grad_accum; ++micro) {
    const at::Tensor batch = run.train->batch(s.it, micro).to(run.device, /*non_blocking=*/true);  // [B, T+1]
    const std::int64_t T = batch.size(1) - 1;
    s.inputs = batch.narrow(1, 0, T);
    at::Tensor loss;
    try {
      loss = micro_step(run, loop, s.inputs, batch.narrow(1, 1, T), micro == 0, s.row.step);
    } catch (const c10::OutOfMemoryError& e) {
      throw micro_batch_out_of_memory(run, e, T);
    }
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
  }
  if (run.hook_batches) {  // fitted to another split: the hooks see what the unfitted split's last micro-batch held
    at::Tensor hb = run.hook_batches->batch(s.it, run.hook_micro);  // [batch-size, T+1]
    if (run.micro_batch < hb.size(0)) hb = hb.narrow(0, 0, run.micro_batch);  // --batch-size itself does not fit
    s.inputs = hb.narrow(1, 0, hb.size(1) - 1).to(run.device);
  }
  double loss_v = loss_sum.item<double>() / static_cast<double>(run.grad_accum);
  if (run.dist.active()) {
    run.dist.average_gradients(loop.params);
    loss_v = run.dist.all_reduce_mean(loss_v);
  }
  s.row.loss = loss_v;
}

}  // namespace gaugelab::gpt2
