// The trainer's schedule and its instability rule, both plain functions of numbers (no LibTorch), so
// tests can pin their values.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace gaugelab::gpt2 {

/// nanoGPT's learning rate for the optimizer step with 0-based index `it`:
///   it < warmup:           lr · (it + 1) / (warmup + 1)                       (linear warm-up)
///   it > decay_iters:      min_lr
///   otherwise:             min_lr + ½(1 + cos(π·(it − warmup)/(decay_iters − warmup)))·(lr − min_lr)
struct LrSchedule {
  double lr = 6e-4;
  double min_lr = 6e-5;
  std::int64_t warmup = 2000;
  std::int64_t decay_iters = 20000;  // >= warmup
  double at(std::int64_t it) const;
};

/// Gradient-spike rule (seed 000 §4.2 describes norms jumping from ~0.25 to 55–123): step s is a spike
/// when s is past the warm-up and grad_norm > factor × median of the previous `window` finite norms
/// (a full window is needed first). The window holds the norms before this step, spikes included, so
/// a sustained plateau stops counting once it fills the window. Deterministic; its state (the window)
/// goes into checkpoints so a resumed run flags the same steps.
class SpikeDetector {
 public:
  SpikeDetector(double factor, std::int64_t window, std::int64_t warmup);
  /// Records the norm of 1-based step `step` and says whether it is a spike.
  bool observe(std::int64_t step, double grad_norm);
  double median() const;  // of the current window (NaN if empty)
  std::vector<double> window() const { return {window_.begin(), window_.end()}; }
  void restore(const std::vector<double>& window);

 private:
  double factor_;
  std::size_t size_;
  std::int64_t warmup_;
  std::deque<double> window_;
};

}  // namespace gaugelab::gpt2
