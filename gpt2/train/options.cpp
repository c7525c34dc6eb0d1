// validate_train_options: every cross-field rule of `gaugelab train` in one place (ranges of single
// flags are declared with the flags in cli/verb_train.cpp and checked there too, so this also guards
// callers that fill TrainOptions in code).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "gpt2/model/config.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/checkpoints.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace {

void need(bool ok, const std::string& msg) {
  if (!ok) throw io::UsageError(msg);
}

}  // namespace

void validate_train_options(const TrainOptions& o) {
  need(!o.run.out.empty(), "--out DIR is required (the run directory: log.h5 and checkpoints/)");
  need(!o.data.empty(), "--data DIR is required (a directory with train.bin and val.bin; see gaugelab prepare)");
  if (o.data.rfind("synthetic:", 0) == 0) {
    std::int64_t docs = 0;
    try {
      docs = io::parse_int(o.data.substr(10), "--data synthetic:N");
    } catch (const io::UsageError&) {
      docs = 0;
    }
    need(docs >= 100, "--data synthetic:N needs N >= 100 documents (got '" + o.data.substr(10) + "')");
  }
  need(o.condition == "A" || o.condition == "B" || o.condition == "C" || o.condition == "D" || o.condition == "E",
       "--condition must be A, B, C, D or E, not '" + o.condition + "'");
  need(o.quotient == "full" || o.quotient == "diagonal", "--quotient must be full or diagonal");
  need(o.quotient_every >= 1, "--quotient-every must be >= 1");
  need(o.quotient_damping >= 0 && std::isfinite(o.quotient_damping), "--quotient-damping must be >= 0");
  need(o.grad_projection == "none" || o.grad_projection == "approx" || o.grad_projection == "exact",
       "--grad-projection must be none, approx or exact, not '" + o.grad_projection + "'");
  need(o.projection_target == "gradient" || o.projection_target == "update",
       "--projection-target must be gradient or update, not '" + o.projection_target + "'");
  need(o.optimizer == "adamw" || o.optimizer == "muon", "--optimizer must be adamw or muon, not '" + o.optimizer + "'");
  need(o.muon_lr > 0 && o.muon_momentum >= 0 && o.muon_momentum < 1 && o.muon_wd >= 0,
       "--muon-lr must be > 0, --muon-momentum in [0, 1), --muon-wd >= 0");
  need(o.muon_qkv == "split" || o.muon_qkv == "fused", "--muon-qkv must be split or fused");
  need(o.magnitude == "wd" || o.magnitude == "cap", "--magnitude must be wd or cap, not '" + o.magnitude + "'");
  need(o.qk_cap > 0 && std::isfinite(o.qk_cap), "--qk-cap must be > 0");
  need(o.qk_gauge_init >= 0 && o.qk_gauge_init <= 10, "--qk-gauge-init must be in [0, 10] (a log-scale spread)");
  need(o.gaugefix_mode == "head" || o.gaugefix_mode == "coordinate", "--gaugefix-mode must be head or coordinate");
  need(o.gaugefix_mode == "head" || o.state_transport == "none",
       "--state-transport applies to --gaugefix-mode head only");
  need(o.qk_norm == "none" || o.qk_norm == "layernorm" || o.qk_norm == "rms",
       "--qk-norm must be none, layernorm or rms, not '" + o.qk_norm + "'");
  need(o.state_transport == "none" || o.state_transport == "vector" || o.state_transport == "covector",
       "--state-transport must be none, vector or covector");
  need(o.precision == "fp32" || o.precision == "bf16", "--precision must be fp32 or bf16");
  need(o.dist_backend == "auto" || o.dist_backend == "gloo" || o.dist_backend == "nccl",
       "--dist-backend must be auto, gloo or nccl");
  need(o.batch_size >= 1 && o.grad_accum >= 1 && o.max_iters >= 1, "--batch-size, --grad-accum and --max-iters must be >= 1");
  // The data loader numbers every sequence a run draws in int64 (step x accumulation x ranks x batch).
  need(static_cast<double>(o.max_iters) * static_cast<double>(std::max<std::int64_t>(o.grad_accum, 1)) *
               static_cast<double>(o.batch_size) <= 0x1p60,
       "--max-iters x --grad-accum x --batch-size must stay below 2^60 sequences (the data order's numbering)");
  need(o.lr > 0 && std::isfinite(o.lr), "--lr must be > 0");
  need(o.min_lr >= 0 && o.min_lr <= o.lr, "--min-lr must be in [0, --lr]");
  need(o.warmup_iters >= 0, "--warmup-iters must be >= 0");
  const std::int64_t decay = o.lr_decay_iters > 0 ? o.lr_decay_iters : o.max_iters;
  need(decay >= o.warmup_iters, "--lr-decay-iters (or --max-iters) must be >= --warmup-iters");
  need(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1, "--beta1 and --beta2 must be in [0, 1)");
  need(o.adam_eps > 0, "--adam-eps must be > 0");
  need(o.weight_decay >= 0 && o.wd_multipliers >= 0 && o.wd_embeddings >= 0, "weight decays must be >= 0");
  need(o.grad_clip >= 0, "--grad-clip must be >= 0 (0 = off)");
  need(o.gaugefix_every >= 1, "--gaugefix-every must be >= 1");
  need(o.sample_tokens >= 0 && o.sample_prompt >= 1, "--sample-tokens must be >= 0 and --sample-prompt >= 1");
  need(o.gaugefix_eps >= 0, "--gaugefix-eps must be >= 0");
  need(o.condition == "B" || o.condition == "D" || o.state_transport == "none",
       "--state-transport " + o.state_transport + " only applies to conditions B and D (GaugeFix)");
  need(o.eval_every >= 1 && o.eval_batches >= 1 && o.log_every >= 1 && o.log_heads_every >= 1 && o.ckpt_every >= 1 &&
           o.keep_ckpts >= 1,
       "--eval-every, --eval-batches, --log-every, --log-heads-every, --ckpt-every and --keep-ckpts must be >= 1");
  need(o.spike_factor > 1, "--spike-factor must be > 1");
  need(o.spike_window >= 1 && o.unstable_spikes >= 1, "--spike-window and --unstable-spikes must be >= 1");
  need(o.dist_timeout_s > 0, "--dist-timeout-s must be > 0");
  need(o.peak_tflops >= 0, "--peak-tflops must be >= 0 (0 = measure)");
  need(o.dropout >= 0 && o.dropout < 1, "--dropout must be in [0, 1)");
  need(o.gelu == "erf" || o.gelu == "tanh", "--gelu must be erf or tanh, not '" + o.gelu + "'");
  need(o.spike_on == "total" || o.spike_on == "clipped" || o.spike_on == "multipliers",
       "--spike-on must be total, clipped or multipliers, not '" + o.spike_on + "'");
  need(o.multiplier_lr_scale >= 0 && std::isfinite(o.multiplier_lr_scale), "--multiplier-lr-scale must be >= 0");
  need(o.batch_tokens >= 0, "--batch-tokens must be >= 0 (0 = use --grad-accum)");
  need(o.batch_tokens == 0 || o.grad_accum == 1,
       "--batch-tokens and --grad-accum both set the global batch: give one of them");
  need(!o.replan || o.resume, "--replan only applies with --resume");
  need(o.init_from.empty() || !o.resume, "--init-from starts a new run; --resume continues one (give one of them)");
  for (const auto& [name, v] : {std::pair{"n-layer", o.n_layer}, {"n-head", o.n_head}, {"n-embd", o.n_embd},
                                {"block-size", o.block_size}, {"vocab-size", o.vocab_size}})
    need(v >= 0, std::string("--") + name + " must be >= 0 (0 = the preset's)");
  try {
    ModelConfig::preset(o.model);
    LrmPlacement::parse(o.multipliers);
  } catch (const io::UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw io::UsageError(e.what());
  }
  need(!(o.compact_vocab && o.vocab_size > 0), "--compact-vocab sets the vocabulary from the data; drop --vocab-size");
}

nlohmann::json saved_run_options(const std::string& out) {
  // The checkpoints the resume itself walks (newest first, damaged ones skipped), so both agree on the run.
  for (const std::string& dir : train_checkpoints_newest_first(out)) {
    std::ifstream in(dir + "/config.json");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("trainer") && j["trainer"].is_object() && j["trainer"].contains("options") &&
        j["trainer"]["options"].is_object())
      return j["trainer"]["options"];
  }
  return nullptr;
}

std::int64_t global_grad_accum(const TrainOptions& o, std::int64_t block_size) {
  if (o.batch_tokens == 0) return o.grad_accum;
  const std::int64_t micro = o.batch_size * block_size;
  need(o.batch_tokens % micro == 0, "--batch-tokens " + std::to_string(o.batch_tokens) +
                                        " is not a multiple of --batch-size x block size = " + std::to_string(micro));
  return o.batch_tokens / micro;
}

std::int64_t rank_grad_accum(const TrainOptions& o, std::int64_t block_size, int world) {
  const std::int64_t global = global_grad_accum(o, block_size);
  need(world >= 1 && global % world == 0,
       "the global batch of " + std::to_string(global) + " micro-batches (--grad-accum or --batch-tokens) does not "
       "divide over " + std::to_string(world) + " ranks; give a multiple of the world size");
  return global / world;
}

}  // namespace gaugelab::gpt2
