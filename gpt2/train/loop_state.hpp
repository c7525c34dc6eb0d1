// What the training loop (loop.cpp) keeps between steps (LoopState) and one step's working values (StepWork),
// shared by the loop's stations: micro_steps.hpp, update.hpp, observe.hpp, evaluate.hpp, progress.hpp, checkpoints.hpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "data/tokenizer.hpp"
#include "gpt2/model/head_projection.hpp"
#include "gpt2/train/run_state.hpp"
#include "gpt2/train/step_graph.hpp"
#include "gpt2/train/step_hooks.hpp"
#include "gpt2/train/step_profiler.hpp"
#include "io/stop_signal.hpp"

namespace gaugelab::gpt2 {

/// Warns once when plain training steps become much slower than they were: an EMA (weight 0.1) of the
/// step time against its best after the first `settle` steps; observe() is true the first time the
/// EMA exceeds `factor` × the best (then never again).
class SlowdownWatch {
 public:
  explicit SlowdownWatch(double factor = 4, int settle = 20) : factor_(factor), settle_(settle) {}
  bool observe(double step_s) {
    ema_ = n_++ == 0 ? step_s : 0.9 * ema_ + 0.1 * step_s;
    if (n_ < settle_) return false;
    if (!(best_ <= ema_)) best_ = ema_;
    if (warned_ || !(ema_ > factor_ * best_)) return false;
    warned_ = true;
    return true;
  }
  double ratio() const { return ema_ / best_; }

 private:
  double factor_;
  int settle_;
  int n_ = 0;
  double ema_ = 0, best_ = std::numeric_limits<double>::infinity();
  bool warned_ = false;
};

/// Model FLOPs utilisation: flops_per_token × tokens_per_s (every rank's tokens) over world devices of
/// peak_tflops each. One rank's peak against all ranks' tokens would count the work world times.
inline double model_flops_utilization(double flops_per_token, double tokens_per_s, double peak_tflops, int world) {
  return flops_per_token * tokens_per_s / (peak_tflops * 1e12 * static_cast<double>(world));
}

/// The loop's state across steps, made once from the run (loop.cpp).
struct LoopState {
  explicit LoopState(TrainRun& run);
  LoopState(const LoopState&) = delete;
  LoopState& operator=(const LoopState&) = delete;

  std::vector<std::unique_ptr<StepHook>> hooks;  // the condition's hooks, in its order (step_hooks.hpp)
  GradProjection grad_projection = GradProjection::none;
  bool project_update = false;  // --projection-target update: project the step's update instead of the gradient
  at::Tensor probe;             // [rows, T] the observables' fixed batch: the first validation batch's inputs
  MomentLookup lookup;          // the optimizer's Adam moments of a parameter (GaugeFix's transport)
  std::vector<at::Tensor> params;  // every trained parameter (the optimizer's)
  io::StopSignals signals;         // a stop also ends an evaluation or a sample early (evaluate.cpp)
  double ema_step_s = std::numeric_limits<double>::quiet_NaN();
  SlowdownWatch slowdown;          // plain steps' time against their best: other work on our cores?
  std::vector<std::int64_t> sample_prompt;         // rank 0, --sample-tokens > 0: the samples' prompt (model ids)
  std::optional<data::Gpt2Tokenizer> sample_tok;   // and the tokenizer when its ranks file is installed
  StepProfiler profiler;
  std::unique_ptr<MicroStepGraph> graph;  // --cuda-graph on: every micro-step a replay (step_graph.hpp)
  std::chrono::steady_clock::time_point t_start;
  std::int64_t first_step = 0;            // the step this process started from (0, or the resumed step)
};

/// One step's working values, from begin_step to the checkpoint.
struct StepWork {
  std::int64_t it = 0;       // 0-based index (the step is it + 1)
  bool last = false;         // the run's last step
  bool sample = false;       // the sampled observables run this step (--log-heads-every, and the last step)
  std::chrono::steady_clock::time_point t0;
  at::Tensor inputs;         // [B, T] token ids the hooks see: the step's last (unfitted) micro-batch
  GradNorms norms;           // before clipping: all, the clipped set, the multipliers
  StepRow row;               // the log row (log.hpp)
};

}  // namespace gaugelab::gpt2
