// `gaugelab train` -> gpt2/train/api.hpp (no LibTorch header here).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/model/config.hpp"
#include "gpt2/train/api.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

namespace {

// `train --resume --out DIR`: every setting not given on this command line is taken from the run's
// newest checkpoint, so the directory alone resumes (nanoGPT's init_from=resume). Settings given
// explicitly stay as given; run_train then refuses a changed identity setting (data order, model,
// optimizer) naming the key and reports any other change.
void resume_defaults(io::Options& opts, const std::string& out) {
  if (out.empty()) return;  // validate_train_options names the missing --out
  const nlohmann::json saved = gpt2::saved_run_options(out);
  if (saved.is_null()) return;  // no checkpoint yet: the run starts at step 0 with the flags given
  const std::vector<std::string>& given = opts.given();
  int taken = 0;
  for (const auto& [key, value] : saved.items()) {
    if (key == "resume" || key == "force" || key == "replan" || key == "out" || key == "config" || !opts.has(key) ||
        std::find(given.begin(), given.end(), key) != given.end())
      continue;
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_array()) {
      for (const auto& item : value) {
        if (!text.empty()) text += ',';
        text += item.is_string() ? item.get<std::string>() : item.dump();
      }
      if (value.empty()) continue;  // an empty list is the default of every list option
    } else if (value.is_null()) {
      continue;
    } else {
      text = value.dump();
    }
    opts.set(key, text);
    ++taken;
  }
  opts.validate();
  std::cerr << "train: --resume: " << taken << " settings taken from the run's newest checkpoint in " << out << "\n";
}

}  // namespace

int verb_train(const Args& args) {
  gpt2::TrainOptions o;
  o.run.seed = 42;  // the paper's first seed
  io::Options opts("train",
                   "Trains GPT-2 with learnable multipliers under condition A (multiplier WD everywhere), B (no Q/K "
                   "WD, GaugeFix every N steps) or C (no Q/K WD, no fix); logs loss, grad norm, per-head Q/K scales "
                   "and drift to OUT/log.h5, checkpoints to OUT/checkpoints; --resume continues. gpt2/README.md, "
                   "\"Training\".");
  using io::Range;
  opts.add("data", &o.data, "directory with train.bin and val.bin, or llm.c *_train_*.bin / *_val_*.bin shards")
      .add("resume", &o.resume, "continue the run in --out from its newest checkpoint")
      .add("replan", &o.replan, "with --resume: accept a changed --max-iters and re-plan the cosine to it")
      .add("init-from", &o.init_from, "start from these weights: our checkpoint or a Hugging Face GPT-2 directory")
      .add("model", &o.model, "size preset: gpt2, gpt2-medium, gpt2-large, gpt2-xl, tiny, nano")
      .add("n-layer", &o.n_layer, "transformer blocks (0 = the preset's)", Range::closed(0, gpt2::ModelConfig::kMaxLayers))
      .add("n-head", &o.n_head, "attention heads (0 = the preset's)", Range::closed(0, gpt2::ModelConfig::kMaxWidth))
      .add("n-embd", &o.n_embd, "residual width (0 = the preset's)", Range::closed(0, gpt2::ModelConfig::kMaxWidth))
      .add("block-size", &o.block_size, "context length, also the training sequence length (0 = the preset's)",
           Range::closed(0, gpt2::ModelConfig::kMaxContext))
      .add("vocab-size", &o.vocab_size, "vocabulary (0 = the preset's, GPT-2 50257)",
           Range::closed(0, gpt2::ModelConfig::kMaxVocab))
      .add("compact-vocab", &o.compact_vocab, "renumber the token ids occurring in the data to 0..K-1 (small corpora)")
      .add("multipliers", &o.multipliers, "multiplier placement: default, none, or site:mode,...")
      .add("dropout", &o.dropout, "dropout while training", Range{0.0, 1.0, false, true})
      .add("bias", &o.bias, "biases in linear maps and LayerNorms (nanoGPT's train.py: false; GPT-2: true)")
      .add("gelu", &o.gelu, "GELU form: erf (nanoGPT's nn.GELU) or tanh (GPT-2, Hugging Face gelu_new)",
           {"erf", "tanh"})
      .add("batch-size", &o.batch_size, "sequences per micro-batch per rank", Range::at_least(1))
      .add("grad-accum", &o.grad_accum, "micro-batches per optimizer step in all, divided over the ranks",
           Range::at_least(1))
      .add("batch-tokens", &o.batch_tokens, "tokens per optimizer step in all (sets --grad-accum; 0 = unset)",
           Range::non_negative())
      .add("max-iters", &o.max_iters, "optimizer steps", Range::at_least(1))
      .add("lr", &o.lr, "peak learning rate", Range::positive())
      .add("min-lr", &o.min_lr, "learning rate at the end of the cosine", Range::non_negative())
      .add("warmup-iters", &o.warmup_iters, "linear warm-up steps", Range::non_negative())
      .add("lr-decay-iters", &o.lr_decay_iters, "step where the cosine reaches min-lr (0 = max-iters)", Range::non_negative())
      .add("optimizer", &o.optimizer, "adamw, or muon (hidden matrices; AdamW on the rest)", {"adamw", "muon"})
      .add("muon-lr", &o.muon_lr, "Muon's learning rate at the schedule's peak", Range::positive())
      .add("muon-momentum", &o.muon_momentum, "Muon's Nesterov momentum", Range{0.0, 1.0, false, true})
      .add("muon-wd", &o.muon_wd, "Muon's decoupled weight decay", Range::non_negative())
      .add("muon-qkv", &o.muon_qkv, "c_attn under Muon: split (Q, K, V apart) or fused", {"split", "fused"})
      .add("beta1", &o.beta1, "AdamW beta1", Range{0.0, 1.0, false, true})
      .add("beta2", &o.beta2, "AdamW beta2", Range{0.0, 1.0, false, true})
      .add("adam-eps", &o.adam_eps, "AdamW epsilon", Range::positive())
      .add("weight-decay", &o.weight_decay, "weight decay of the matrices", Range::non_negative())
      .add("wd-multipliers", &o.wd_multipliers, "lambda_lrm: weight decay of the multipliers (Q/K ones only under A)",
           Range::non_negative())
      .add("wd-embeddings", &o.wd_embeddings, "weight decay of token and position embeddings", Range::non_negative())
      .add("multiplier-lr-scale", &o.multiplier_lr_scale, "multipliers step at this x the lr (0 freezes them)",
           Range::non_negative())
      .add("grad-clip", &o.grad_clip, "clip the gradient norm to this (0 = off)", Range::non_negative())
      .add("clip-multipliers", &o.clip_multipliers, "include multiplier gradients in the clipped norm")
      .add("condition", &o.condition,
           "A: WD on all multipliers; B: no Q/K WD + GaugeFix; C: no Q/K WD, no fix; D: GaugeFix + magnitude "
           "control; E: quotient-aware attention updates",
           {"A", "B", "C", "D", "E"})
      .add("quotient", &o.quotient, "condition E: full or diagonal opposite-Gram correction", {"full", "diagonal"})
      .add("quotient-every", &o.quotient_every, "condition E: full correction every k-th step, diagonal between",
           Range::at_least(1))
      .add("quotient-damping", &o.quotient_damping, "condition E: damping added to each Gram", Range::non_negative())
      .add("quotient-vo", &o.quotient_vo, "condition E: also correct the V/O pair")
      .add("grad-projection", &o.grad_projection,
           "attention gradients made gauge-orthogonal before clipping (seed 001 Alg. 2 = approx, Remark 51 = exact); "
           "needs --multipliers without q, k, v, attn_out",
           {"none", "approx", "exact"})
      .add("projection-target", &o.projection_target,
           "what --grad-projection projects: the gradient (before clipping) or the optimizer's update (after it)",
           {"gradient", "update"})
      .add("gaugefix-every", &o.gaugefix_every, "conditions B, D: GaugeFix after every N-th step", Range::at_least(1))
      .add("gaugefix-mode", &o.gaugefix_mode, "B, D: one GaugeFix factor per head or per coordinate",
           {"head", "coordinate"})
      .add("gaugefix-vo", &o.gaugefix_vo, "B, D: also balance the V/O multipliers of each head")
      .add("qk-gauge-init", &o.qk_gauge_init,
           "start each head at r_Q/g, r_K*g with log g ~ N(0, sigma^2): same function, off the balanced "
           "slice (0 = every multiplier 1)",
           Range::closed(0, 10))
      .add("magnitude", &o.magnitude, "condition D: s_Q*s_K held by wd (lambda_lrm on Q/K) or cap (--qk-cap)",
           {"wd", "cap"})
      .add("qk-cap", &o.qk_cap, "condition D with --magnitude cap: largest s_Q*s_K per head", Range::positive())
      .add("qk-norm", &o.qk_norm, "per-head normalisation of q and k (architecture change)",
           {"none", "layernorm", "rms"})
      .add("gaugefix-eps", &o.gaugefix_eps, "epsilon of the GaugeFix factor", Range::non_negative())
      .add("state-transport", &o.state_transport, "Adam moments under GaugeFix", {"none", "vector", "covector"})
      .add("device", &o.device, "cpu, cuda or cuda:N (data-parallel ranks use cuda:LOCAL_RANK)")
      .add("precision", &o.precision, "fp32, or bf16 autocast (fp32 master weights)", {"fp32", "bf16"})
      .add("dist-backend", &o.dist_backend, "data parallel backend", {"auto", "gloo", "nccl"})
      .add("dist-timeout-s", &o.dist_timeout_s, "collective timeout: a dead rank fails the others", Range::positive())
      .add("eval-every", &o.eval_every, "validation loss after every N-th step", Range::at_least(1))
      .add("eval-batches", &o.eval_batches, "fixed validation batches", Range::at_least(1))
      .add("log-every", &o.log_every, "progress line every N steps", Range::at_least(1))
      .add("log-heads-every", &o.log_heads_every, "per-head Q/K scales and drift every N steps", Range::at_least(1))
      .add("sample-tokens", &o.sample_tokens, "greedy tokens written to OUT/samples.txt after each evaluation (0 = none)",
           Range::non_negative())
      .add("sample-prompt", &o.sample_prompt, "prompt of those samples: the first N tokens of the first validation window",
           Range::at_least(1))
      .add("ckpt-every", &o.ckpt_every, "checkpoint after every N-th step", Range::at_least(1))
      .add("keep-ckpts", &o.keep_ckpts, "newest checkpoints kept", Range::at_least(1))
      .add("peak-tflops", &o.peak_tflops, "MFU denominator in TFLOP/s (0 = measure a matmul now)", Range::non_negative())
      .add("spike-on", &o.spike_on, "the gradient norm the spike rule watches", {"total", "clipped", "multipliers"})
      .add("spike-factor", &o.spike_factor, "spike: grad norm > factor x running median", Range{1.0, std::nullopt, true, false})
      .add("spike-window", &o.spike_window, "steps in the running median", Range::at_least(1))
      .add("unstable-spikes", &o.unstable_spikes, "spikes that make a run unstable", Range::at_least(1));
  io::add_run_flags(opts, o.run, "run directory: log.h5 and checkpoints/");
  if (!opts.parse(args)) return 0;
  if (o.resume) resume_defaults(opts, o.run.out);
  gpt2::validate_train_options(o);
  io::Provenance prov{"gpt2/train", {"gaugelab", "train"}, opts.to_json(), o.run.seed, 1};
  prov.argv.insert(prov.argv.end(), args.begin(), args.end());
  const gpt2::TrainResult r = gpt2::run_train(o, std::move(prov));
  return r.diverged ? 3 : 0;
}

#else  // built without the GPT-2 tier

int verb_train(const Args&) { return not_built("train", "GPT-2 trainer; configure with GAUGELAB_WITH_TORCH=ON"); }

#endif

}  // namespace gaugelab::cli
