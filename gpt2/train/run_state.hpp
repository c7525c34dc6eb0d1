// Everything a training run holds (TrainRun) and what a checkpoint carries besides model and optimizer
// (TrainState). Made by setup_train (setup.hpp); read and advanced by the loop's stations (loop.cpp).
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
#include "gpt2/train/conditions.hpp"
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
  bool eval_pending = false;  // a stop cut this step's due evaluation or sample short: a resume does it first
  std::string stop_reason;  // "non-finite loss" or "non-finite gradient" when diverged (not kept across resume: a
                            // diverged run is finished)
};

struct TrainRun {
  io::WriterLock out_lock;  // rank 0: --out is this run's alone until the run ends (released last)
  TrainOptions options;
  const Condition* condition = nullptr;  // the row of --condition (conditions.hpp), looked up once by setup_train
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
  Precision precision = Precision::fp32;  // --precision, with bf16's path resolved (--bf16-mode)
  std::string bf16_choice;                // why that path: how --bf16-mode decided (empty for fp32)
  std::unique_ptr<GPT> model;
  std::unique_ptr<TrainOptimizer> opt;
  std::unique_ptr<TrainBatches> train;
  std::unique_ptr<ValidationBatches> val;
  VocabMap vocab_map;
  LrSchedule schedule;
  SpikeDetector spikes{10, 100, 0};
  std::optional<TrainLog> log;  // rank 0 only
  TrainState state;
  std::int64_t last_checkpoint_step = -1;  // the newest checkpoint this rank knows to be whole (-1: none yet)
  bool has_heads = false;       // Q/K row multipliers exist: scales and drift are sampled
  std::int64_t tokens_per_step = 0;  // micro-batch × context × global accumulation
  double flops_per_token = 0;        // 6N + 12·L·d·T (nanoGPT's estimate, PaLM appendix B)
  double peak_tflops = 0;            // MFU denominator
};

}  // namespace gaugelab::gpt2
