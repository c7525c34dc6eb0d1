// The loop's first station: a step's working values, its profiler window and its RNG; the model in train mode
// with zeroed gradients. Every step reseeds the generators from (seed, step, rank), so no RNG state needs
// checkpointing and a resumed run draws what the uninterrupted one drew.
#include "gpt2/train/step_start.hpp"

#include <chrono>
#include <limits>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include "core/random.hpp"

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

}  // namespace gaugelab::gpt2
