// The trainer's HDF5 run log (DESIGN §2; kind "gpt2/train"). The figure scripts read exactly these
// names (add freely, rename never):
//   /series/step          int64, the 1-based optimizer step of each row (one row per step)
//   /series/loss          mean training loss of the step's global batch (before the update)
//   /series/lr            learning rate used by the step
//   /series/grad_norm     total gradient norm before clipping, over every parameter, multipliers
//                         included (the paper's quantity; runs before this column's change logged
//                         the clipped set here)
//   /series/grad_norm_clipped      norm of the clipped set before clipping (all but the multipliers
//                         unless --clip-multipliers)
//   /series/grad_norm_multipliers  norm of the multiplier gradients alone (0 without multipliers)
//   /series/tokens_per_s  training throughput of the step (all ranks)
//   /series/tokens        training tokens consumed up to and including the step
//   /series/val_loss      validation loss after the step; NaN on steps without evaluation
//   /series/drift_max, /series/drift_mean   max / mean over layers and heads of |log(s_Q/s_K)|,
//                         sampled after the step's update (and fix); NaN on steps without a sample
//   /series/spike         1 if the step's norm (--spike-on: total, clipped or multipliers) broke the
//                         instability rule, else 0
//   /series/after_fix     1 if GaugeFix ran after this step's update, else 0
//   /series/attn_logit_max  max over layers and heads of /heads/attn_logit_max; NaN between samples
//   /series/logz_mean     mean over the probe's positions of the output log-partition log Σ exp(logit)
//                         (the z-loss quantity); NaN between samples
//   /series/update_ratio_<group>  ‖Δp‖/‖p‖ of the optimizer step per parameter group (matrices,
//                         multipliers_qk, multipliers_other, biases_norms, embeddings) on sample steps;
//                         NaN between samples and for a group the model lacks
//   /heads/s_q, /heads/s_k, /heads/s_qk   [record, layer, head] RMS scales and their product (NaN
//                         without Q/K row multipliers), every --log-heads-every steps (and the last),
//                         with /heads/step
//   /heads/attn_logit_max [record, layer, head] max |q·k|/√d_h over the probe batch (the first
//                         validation batch) and the causal positions: attention-logit growth
//   /heads/qk_eff_log_ratio [record, layer, head] log(n_Q/n_K): Frobenius norms of the head's rows of the
//                         effective Q and K maps (gaugefix.hpp); every multiplier placement
//   /heads/attn_logit_max_signed [record, layer, head] max q·k/√d_h (signed) over the same batch and positions:
//                         Kimi K2's S_max, what QK-Clip bounds (NaN in the rows of a log from before it existed)
//   /tables/processes     one row per process that trained this run (a resumed run adds one): start_step
//                         (int64, the step it started after; -1 where a log from before this table did not
//                         say), end_step (int64), seconds (float64, its training loop's wall time); written as
//                         the process ends (a process killed with SIGKILL has no row, as it has no summary)
//   /summary              condition, seed, best_val_loss, final_val_loss, final_drift_max,
//                         final_drift_mean, max_drift_max, n_spikes, stable, diverged, stop_reason
//                         (completed, interrupted, non-finite loss or non-finite gradient),
//                         final_eff_imbalance_max (max |qk_eff_log_ratio| at the end), steps, tokens, ...,
//                         seconds_this_process, seconds_total (the sum of /tables/processes' seconds), processes
//                         (its rows), seconds_per_process (their seconds as text, "12.3, 4.56")
// A resumed run rebuilds the log with the rows up to its checkpoint's step, then appends, so every
// step appears once and the series of an interrupted and resumed run equal the uninterrupted one's.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "io/run_log.hpp"

namespace gaugelab::gpt2 {

struct StepRow {
  std::int64_t step = 0;
  double loss = 0, lr = 0, grad_norm = 0, tokens_per_s = 0, tokens = 0;
  double grad_norm_clipped = 0, grad_norm_multipliers = 0;
  double attn_logit_max = 0, logz_mean = 0;  // NaN when not sampled this step
  std::map<std::string, double> update_ratio;  // group name -> ‖Δp‖/‖p‖ of the step's update (sample steps)
  double val_loss = 0, drift_max = 0, drift_mean = 0;  // NaN when not measured this step
  bool spike = false, after_fix = false;
};

class TrainLog {
 public:
  /// A new log at `path` (replacing one only with `force`).
  static TrainLog create(const std::string& path, const io::Provenance& prov, bool force, int layers, int heads);
  /// The log of a resumed run: the existing log's rows with step <= `up_to_step` copied into a fresh
  /// log at the same path (an earlier interrupted rebuild is picked up from PATH.resume-src).
  /// A finite `val_loss_at_step` fills the validation loss of the row of step `up_to_step` (an evaluation
  /// that a stop cut short there, done by the resumed run).
  static TrainLog rebuild(const std::string& path, const io::Provenance& prov, std::int64_t up_to_step, int layers,
                          int heads, double val_loss_at_step = std::numeric_limits<double>::quiet_NaN());

  void append(const StepRow& row);
  /// s_q, s_k [L, H] (any device, float; undefined without Q/K row multipliers: NaN), the largest attention score
  /// per head attn [L, H] (absolute) and attn_signed [L, H] (signed; undefined: NaN), eff_ratio [L, H]
  /// (gaugefix.hpp): appends s_q, s_k, s_q·s_k, attn, eff_ratio and attn_signed as one /heads record.
  void append_heads(std::int64_t step, const at::Tensor& s_q, const at::Tensor& s_k, const at::Tensor& attn,
                    const at::Tensor& eff_ratio, const at::Tensor& attn_signed);
  /// This process's row of /tables/processes (it trained from the step the log was created or rebuilt at
  /// up to `end_step`, in `seconds`) and the summary's seconds_this_process, seconds_total, processes and
  /// seconds_per_process, over the rows the log already held and this one.
  void end_process(std::int64_t end_step, double seconds);
  io::RunLog& log() { return log_; }

  /// A row of /tables/processes.
  struct Process {
    std::int64_t start_step = 0, end_step = 0;
    double seconds = 0;
  };

 private:
  explicit TrainLog(io::RunLog log, std::int64_t start_step = 0, std::vector<Process> earlier = {})
      : log_(std::move(log)), start_step_(start_step), earlier_(std::move(earlier)) {}
  static void declare(io::RunLog& log, int layers, int heads);
  io::RunLog log_;
  std::int64_t start_step_ = 0;   // the step this process started after
  std::vector<Process> earlier_;  // the rows of the processes before this one
};

}  // namespace gaugelab::gpt2
