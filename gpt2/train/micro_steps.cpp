// The loop's first stations: a step begun (its working values, its profiler window and its RNG; the model in train
// mode with zeroed gradients) and its gradients (the micro-steps, eager or replays of one captured CUDA graph:
// step_graph.hpp; the hooks' batch; the mean over the data-parallel ranks). Every step reseeds the generators from
// (seed, step, rank), so no RNG state needs checkpointing and a resumed run draws what the uninterrupted one drew.
#include "gpt2/train/micro_steps.hpp"

#include <chrono>
#include <limits>
#include <mutex>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/TensorOperators.h>
#include <c10/util/Exception.h>

#include "core/random.hpp"
#include "gpt2/train/micro_batch.hpp"

namespace gaugelab::gpt2 {

namespace {

// The CPU generator and, on a CUDA device, that device's generator (dropout) seeded from (seed, step, rank).
void reseed_step_rng(std::uint64_t seed, std::int64_t step, int rank, c10::Device device) {
  const std::uint64_t s =
      core::mix_seed(seed ^ 0x5eedULL, static_cast<std::uint64_t>(step) * 65536u + static_cast<std::uint64_t>(rank));
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
  if (device.is_cuda()) {  // the device's own generator draws CUDA dropout masks (and resets its offset)
    at::Generator gen = at::globalContext().defaultGenerator(device);  // a handle sharing the device's generator
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
}

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

StepWork begin_step(TrainRun& run, LoopState& loop, std::int64_t it) {
  const TrainOptions& o = run.options;
  StepWork s;
  s.t0 = std::chrono::steady_clock::now();
  s.it = it;
  s.row.step = it + 1;  // 1-based: the row's step
  s.last = s.row.step == o.max_iters;
  s.sample = s.row.step % o.log_heads_every == 0 || s.last;
  s.row.val_loss = s.row.drift_max = s.row.drift_mean = std::numeric_limits<double>::quiet_NaN();
  loop.profiler.begin(s.row.step);
  reseed_step_rng(o.run.seed, it, run.dist.rank, run.device);
  run.model->train(true);
  run.opt->zero_grad();
  return s;
}

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
