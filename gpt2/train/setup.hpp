// Everything a training run holds, and the steps around the loop (loop.cpp): setting up a fresh or
// resumed run, evaluation, checkpointing, and the closing summary.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/train/data_loader.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/dist_hooks.hpp"
#include "gpt2/train/log.hpp"
#include "gpt2/train/micro_batch.hpp"
#include "gpt2/train/optimizer.hpp"
#include "gpt2/train/schedule.hpp"
#include "io/writer_lock.hpp"

namespace gaugelab::gpt2 {

/// What a checkpoint carries besides model and optimizer (config.json "trainer").
struct TrainState {
  std::int64_t step = 0;    // optimizer steps completed
  std::int64_t tokens = 0;  // training tokens consumed
  double best_val_loss = 0, final_val_loss = 0;           // NaN until evaluated
  double final_drift_max = 0, final_drift_mean = 0;       // NaN until sampled
  double max_drift_max = 0;
  std::int64_t n_spikes = 0;
  bool diverged = false, interrupted = false;
  std::string stop_reason;  // "non-finite loss" or "non-finite gradient" when diverged (not kept across resume: a
                            // diverged run is finished)
};

struct TrainRun {
  io::WriterLock out_lock;  // rank 0: --out is this run's alone until the run ends (released last)
  TrainOptions options;
  io::Provenance prov;
  TrainDist dist;
  std::string data_dir;         // --data, or OUT/data for synthetic:N
  std::vector<std::string> train_files, val_files;  // train.bin / val.bin, or the llm.c shards in name order
  std::int64_t grad_accum = 1;  // micro-batches per step on this rank (the global count / world, or fitted)
  std::int64_t micro_batch = 0; // sequences per training micro-batch: --batch-size, or fitted (micro_batch.hpp);
                                // 0 (no run set it): evaluate() takes each batch whole
  std::optional<MicroBatchFit> fit;  // --fit-micro-batch on: what was chosen and why
  std::unique_ptr<TrainBatches> hook_batches;  // fitted to another split: the unfitted one, for the hooks' batch
  std::int64_t hook_micro = 0;                 // its last micro-batch on this rank
  c10::Device device = c10::Device(c10::kCPU);
  Precision precision = Precision::fp32;
  std::unique_ptr<GPT> model;
  std::unique_ptr<TrainOptimizer> opt;
  std::unique_ptr<TrainBatches> train;
  std::unique_ptr<ValidationBatches> val;
  VocabMap vocab_map;
  LrSchedule schedule;
  SpikeDetector spikes{10, 100, 0};
  std::optional<TrainLog> log;  // rank 0 only
  TrainState state;
  bool has_heads = false;       // Q/K row multipliers exist: scales and drift are sampled
  std::int64_t tokens_per_step = 0;  // micro-batch × context × global accumulation
  double flops_per_token = 0;        // 6N + 12·L·d·T (nanoGPT's estimate, PaLM appendix B)
  double peak_tflops = 0;            // MFU denominator
};

/// Validates the options, forms the data-parallel group, builds or resumes model, optimizer, data
/// and log, prints every setting. Throws io::UsageError / std::runtime_error with one line.
TrainRun setup_train(const TrainOptions& options, io::Provenance prov);
/// The optimizer's groups as the options and the condition set them (weight decay per group,
/// multiplier lr, clipping set, Muon); on CUDA, Muon's NS5 runs in bfloat16.
OptimizerSettings optimizer_settings(const TrainOptions& o, c10::Device device);
/// Mean validation loss over the fixed batches (ranks share the batches when they divide evenly).
double evaluate(TrainRun& run);
/// Checkpoint of the current step (rank 0 writes; every rank waits for it).
void save_state(TrainRun& run);
/// build_run.cpp: a device allocation that failed inside a step (c10::OutOfMemoryError: CUDA's caching allocator) as one line
/// naming the micro-batch and the flags to lower; `what` is LibTorch's message, its first line kept.
std::runtime_error out_of_memory_error(const std::string& what, std::int64_t batch_size, std::int64_t tokens,
                                       std::int64_t grad_accum, c10::Device device);
/// Writes /summary, closes the log, prints the closing summary.
TrainResult finish_train(TrainRun& run, double seconds);
/// Reseeds the CPU generator and, on a CUDA device, that device's generator (dropout) from (seed, step,
/// rank): no RNG state needs checkpointing, and a resumed run draws what the uninterrupted one drew.
void reseed_step_rng(std::uint64_t seed, std::int64_t step, int rank, c10::Device device);
/// Matmul throughput (TFLOP/s) of `device` in the run's compute dtype, measured over ~0.3 s.
double measure_matmul_tflops(c10::Device device, Precision precision);
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

nlohmann::json train_state_json(const TrainRun& run);
TrainState train_state_from_json(const nlohmann::json& j);

}  // namespace gaugelab::gpt2
