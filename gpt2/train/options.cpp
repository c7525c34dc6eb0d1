// The options of `gaugelab train`, declared once (declare_train_options: name, help, range or choices,
// identity), and the rules across several of them (validate_train_options). The front door parses with
// the declaration; the trainer checks with it (so settings filled in code meet the same ranges) and the
// resume reads its identity marks.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "data/synthetic_corpus.hpp"
#include "gpt2/model/config.hpp"
#include "gpt2/model/cuda/ops_table.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/conditions.hpp"
#include "gpt2/train/hook_registry.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/choice_option.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;

namespace {

void need(bool ok, const std::string& msg) {
  if (!ok) throw io::UsageError(msg);
}

std::string condition_help() {
  std::string h = "training condition (gpt2/train/conditions.hpp):";
  for (const Condition& c : conditions()) {
    const std::string key = c.key, title = c.title;
    h += " " + (title.rfind(key + ":", 0) == 0 ? title : key + " = " + title) + ";";
  }
  h.pop_back();
  return h;
}

// Greedy tokens per evaluation sample: each is a forward pass, and the line goes to samples.txt.
constexpr double kMaxSampleTokens = 100000;

// The trainer computes in float32 (bf16 under autocast): a real setting beyond float's largest value
// failed deep inside LibTorch ("value cannot be converted to type float without overflow", naming no
// flag), so the ranges of the real settings end there.
constexpr double kFloatMax = std::numeric_limits<float>::max();
io::Range float_positive() { return {0.0, kFloatMax, true, false}; }
io::Range float_non_negative() { return {0.0, kFloatMax, false, false}; }

}  // namespace

void declare_train_options(io::Options& opts, TrainOptions& o) {
  using io::Range;
  opts.add("data", &o.data, "directory with train.bin and val.bin, or llm.c *_train_*.bin / *_val_*.bin shards")
      .identity()
      .add("resume", &o.resume, "continue the run in --out from its newest checkpoint")
      .transient()
      .add("replan", &o.replan, "with --resume: accept a changed --max-iters and re-plan the cosine to it")
      .transient()
      .add("init-from", &o.init_from, "start from these weights: our checkpoint or a Hugging Face GPT-2 directory")
      .transient()
      .add("model", &o.model, "size preset: gpt2, gpt2-medium, gpt2-large, gpt2-xl, tiny, nano")
      .identity()
      .add("n-layer", &o.n_layer, "transformer blocks (0 = the preset's)", Range::closed(0, ModelConfig::kMaxLayers))
      .identity()
      .add("n-head", &o.n_head, "attention heads (0 = the preset's)", Range::closed(0, ModelConfig::kMaxWidth))
      .identity()
      .add("n-embd", &o.n_embd, "residual width (0 = the preset's)", Range::closed(0, ModelConfig::kMaxWidth))
      .identity()
      .add("block-size", &o.block_size, "context length, also the training sequence length (0 = the preset's)",
           Range::closed(0, ModelConfig::kMaxContext))
      .identity()
      .add("vocab-size", &o.vocab_size, "vocabulary (0 = the preset's, GPT-2 50257)",
           Range::closed(0, ModelConfig::kMaxVocab))
      .identity()
      .add("compact-vocab", &o.compact_vocab, "renumber the token ids occurring in the data to 0..K-1 (small corpora)")
      .identity()
      .add("multipliers", &o.multipliers, "multiplier placement: default, none, or site:mode,...")
      .identity()
      .add("dropout", &o.dropout, "dropout while training", Range{0.0, 1.0, false, true})
      .identity()
      .add("bias", &o.bias, "biases in linear maps and LayerNorms (nanoGPT's train.py: false; GPT-2: true)")
      .identity();
  io::add_choice(opts, "gelu", &o.gelu, "GELU form: erf (nanoGPT's nn.GELU) or tanh (GPT-2, Hugging Face gelu_new)",
                 gelu_choices())
      .identity()
      .add("batch-size", &o.batch_size, "sequences per micro-batch per rank", Range::at_least(1))
      .identity()
      .add("grad-accum", &o.grad_accum, "micro-batches per optimizer step in all, divided over the ranks",
           Range::at_least(1))
      .identity()
      .add("batch-tokens", &o.batch_tokens, "tokens per optimizer step in all (sets --grad-accum; 0 = unset)",
           Range::non_negative())
      .identity();
  io::add_choice(opts, "fit-micro-batch", &o.fit_micro_batch,
           "on: each step's sequences re-split into the largest micro-batch that fits the device (probed on CUDA, "
           "estimated on the CPU); the same sequences and mean loss per step, validation keeps --batch-size",
           switch_choices())
      .add("fit-memory", &o.fit_memory, "share of the device's memory a fitted micro-batch may use",
           Range::unit_open_closed())
      .add("max-iters", &o.max_iters, "optimizer steps", Range::at_least(1))
      .add("lr", &o.lr, "peak learning rate", float_positive())
      .identity()
      .add("min-lr", &o.min_lr, "learning rate at the end of the cosine", float_non_negative())
      .identity()
      .add("warmup-iters", &o.warmup_iters, "linear warm-up steps", Range::non_negative())
      .identity()
      .add("lr-decay-iters", &o.lr_decay_iters, "step where the cosine reaches min-lr (0 = max-iters)", Range::non_negative())
      .identity();
  io::add_choice(opts, "optimizer", &o.optimizer, "adamw, or muon (hidden matrices; AdamW on the rest)", optimizer_choices())
      .identity()
      .add("muon-lr", &o.muon_lr, "Muon's learning rate at the schedule's peak", float_positive())
      .identity()
      .add("muon-momentum", &o.muon_momentum, "Muon's Nesterov momentum", Range{0.0, 1.0, false, true})
      .identity()
      .add("muon-wd", &o.muon_wd, "Muon's decoupled weight decay", float_non_negative())
      .identity();
  io::add_choice(opts, "muon-qkv", &o.muon_qkv, "c_attn under Muon: split (Q, K, V apart) or fused", muon_qkv_choices())
      .identity()
      .add("beta1", &o.beta1, "AdamW beta1", Range{0.0, 1.0, false, true})
      .identity()
      .add("beta2", &o.beta2, "AdamW beta2", Range{0.0, 1.0, false, true})
      .identity()
      .add("adam-eps", &o.adam_eps, "AdamW epsilon", float_positive())
      .identity()
      .add("weight-decay", &o.weight_decay, "weight decay of the matrices", float_non_negative())
      .identity()
      .add("wd-multipliers", &o.wd_multipliers, "lambda_lrm: weight decay of the multipliers (Q/K ones only under A)",
           float_non_negative())
      .identity()
      .add("wd-embeddings", &o.wd_embeddings, "weight decay of token and position embeddings", float_non_negative())
      .identity()
      .add("multiplier-lr-scale", &o.multiplier_lr_scale, "multipliers step at this x the lr (0 freezes them)",
           float_non_negative())
      .identity()
      .add("grad-clip", &o.grad_clip, "clip the gradient norm to this (0 = off)", float_non_negative())
      .identity()
      .add("clip-multipliers", &o.clip_multipliers, "include multiplier gradients in the clipped norm")
      .identity()
      .add("condition", &o.condition, condition_help(), condition_keys())
      .identity();
  io::add_choice(opts, "quotient", &o.quotient, "condition E: full or diagonal opposite-Gram correction", quotient_choices())
      .identity()
      .add("quotient-every", &o.quotient_every, "condition E: full correction every k-th step, diagonal between",
           Range::at_least(1))
      .identity()
      .add("quotient-damping", &o.quotient_damping, "condition E: damping added to each Gram", float_non_negative())
      .identity()
      .add("quotient-vo", &o.quotient_vo, "condition E: also correct the V/O pair")
      .identity();
  io::add_choice(opts, "quotient-scale", &o.quotient_scale,
           "condition E: none, or rms (each head's corrected Q/K pair and V/O pair rescaled by one factor per pair to "
           "the RMS of the optimizer's raw increments of that pair: the correction's direction at the optimizer's step "
           "size; condition Erms)",
           quotient_scale_choices())
      .identity();
  io::add_choice(opts, "grad-projection", &o.grad_projection,
           "attention gradients made gauge-orthogonal before clipping (seed 001 Alg. 2 = approx, Remark 51 = exact); "
           "needs --multipliers without q, k, v, attn_out",
           grad_projection_choices())
      .identity();
  io::add_choice(opts, "projection-target", &o.projection_target,
           "what --grad-projection projects: the gradient (before clipping) or the optimizer's update (after it)",
           projection_target_choices())
      .identity()
      .add("gaugefix-every", &o.gaugefix_every,
           "conditions with GaugeFix (" + key_list(condition_keys_with(StepHookKind::gauge_fix)) + "): after every N-th step",
           Range::at_least(1))
      .identity();
  io::add_choice(opts, "gaugefix-mode", &o.gaugefix_mode,
           "conditions with GaugeFix: one factor per head (s_Q = s_K), per coordinate, or per head at equal norms of "
           "the effective Q and K maps (effective, condition Beff)",
           gaugefix_mode_choices())
      .identity()
      .add("gaugefix-vo", &o.gaugefix_vo, "conditions with GaugeFix: also balance the V/O multipliers of each head")
      .identity()
      .add("qk-gauge-init", &o.qk_gauge_init,
           "start each head at r_Q/g, r_K*g with log g ~ N(0, sigma^2): same function, off the balanced "
           "slice (0 = every multiplier 1)",
           Range::closed(0, 10))
      .identity();
  io::add_choice(opts, "magnitude", &o.magnitude, "the control of s_Q*s_K: set by the condition (D: wd, Dcap: cap)", magnitude_choices())
      .identity()
      .add("qk-cap", &o.qk_cap, "condition Dcap: largest s_Q*s_K per head", float_positive())
      .identity()
      .add("qk-clip-tau", &o.qk_clip_tau, "condition QKclip: largest attention logit per head (Kimi K2: 100)",
           float_positive())
      .identity();
  io::add_choice(opts, "qk-clip-on", &o.qk_clip_on, "condition QKclip: rescale the heads' weight rows or their Q/K multipliers",
           qk_clip_on_choices())
      .identity();
  io::add_choice(opts, "qk-norm", &o.qk_norm, "per-head normalisation of q and k (architecture change)", qk_norm_choices())
      .identity()
      .add("gaugefix-eps", &o.gaugefix_eps, "epsilon of the GaugeFix factor", float_non_negative())
      .identity();
  io::add_choice(opts, "state-transport", &o.state_transport, "Adam moments under GaugeFix", state_transport_choices())
      .identity()
      .add("device", &o.device, "cpu, cuda or cuda:N (data-parallel ranks use cuda:LOCAL_RANK)");
  io::add_choice(opts, "precision", &o.precision, "fp32, or bf16 autocast (fp32 master weights)", precision_choices());
  io::add_choice(opts, "bf16-mode", &o.bf16_mode,
                 "how --precision bf16 is computed: native (autocast), emulated (float32 matmuls with operands and "
                 "outputs rounded to bf16 where autocast rounds them), or auto (the faster of the two at the model's "
                 "largest matmul, timed at start and recorded as its result; native on CUDA)",
                 bf16_mode_choices());
  io::add_choice(opts, "attention", &o.attention,
           "attention kernel: sdpa (fused, chosen by the device's PyTorch), math (plain matmul-softmax-matmul, "
           "the same function to rounding), or on CUDA one fused backend alone: flash, efficient, cudnn",
           attention_choices());
  // The kernel flags, each named by its op's row of the CUDA ops table (model/cuda/ops_table.hpp).
  io::add_choice(opts, cuda::flag_option(cuda::cuda_op("lm_head_ce")), &o.lm_head_kernel,
                 "the loss's softmax and gradient on CUDA in bf16: fused (one kernel, where built) or aten (ATen's "
                 "passes, the reference); elsewhere always aten", kernel_path_choices());
  io::add_choice(opts, cuda::flag_option(cuda::cuda_op("residual_layer_norm")), &o.ln_kernel,
                 "residual add + LayerNorm on CUDA in bf16: fused (one kernel each way, where built) or aten (ATen's "
                 "ops, the reference); elsewhere always aten", kernel_path_choices());
  io::add_choice(opts, cuda::flag_option(cuda::cuda_op("lrm_weight")), &o.lrm_kernel,
                 "the multipliers' effective weight on CUDA in bf16: fused (one kernel each way, where built) or aten "
                 "(ATen's products, the reference); elsewhere always aten", kernel_path_choices());
  io::add_choice(opts, "cuda-graph", &o.cuda_graph,
           "on: each micro-step's forward and backward captured once as a CUDA graph and replayed (CUDA, dropout "
           "0; the optimizer, hooks and logging stay eager); off (the default: on an H200 it was no faster)",
           switch_choices());
  io::add_choice(opts, "dist-backend", &o.dist_backend, "data parallel backend", dist_backend_choices())
      .add("dist-timeout-s", &o.dist_timeout_s, "collective timeout: a dead rank fails the others", float_positive())
      .add("eval-every", &o.eval_every, "validation loss after every N-th step", Range::at_least(1))
      .add("eval-batches", &o.eval_batches,
           "fixed validation batches (at most as many windows as the validation tokens hold)", Range::at_least(1))
      .add("log-every", &o.log_every, "progress line every N steps", Range::at_least(1))
      .add("log-heads-every", &o.log_heads_every, "per-head Q/K scales and drift every N steps", Range::at_least(1))
      .add("sample-tokens", &o.sample_tokens,
           "greedy tokens written to OUT/samples.txt after each evaluation (0 = none; one forward pass each)",
           Range::closed(0, kMaxSampleTokens))
      .add("sample-prompt", &o.sample_prompt, "prompt of those samples: the first N tokens of the first validation window",
           Range::at_least(1))
      .add("ckpt-every", &o.ckpt_every,
           "checkpoint after every N-th step, on SIGTERM/SIGINT and after the last; 0 = never (a run that cannot be "
           "resumed: timing runs)", Range::at_least(0))
      .add("keep-ckpts", &o.keep_ckpts, "newest checkpoints kept", Range::at_least(1))
      .add("peak-tflops", &o.peak_tflops, "MFU denominator in TFLOP/s (0 = measure a matmul now)", float_non_negative())
      .add("profile-from", &o.profile_from,
           "trace steps N .. N+profile-steps-1 with PyTorch's profiler into OUT/profile.json (0 = off; "
           "scripts/trace_top.py ranks the kernels)", Range::at_least(0))
      .add("profile-steps", &o.profile_steps, "steps in that trace", Range::closed(1, 100));
  io::add_choice(opts, "spike-on", &o.spike_on, "the gradient norm the spike rule watches", spike_on_choices())
      .identity()
      .add("spike-factor", &o.spike_factor, "spike: grad norm > factor x running median", Range{1.0, kFloatMax, true, false})
      .identity()
      .add("spike-window", &o.spike_window, "steps in the running median", Range::at_least(1))
      .identity()
      .add("unstable-spikes", &o.unstable_spikes, "spikes that make a run unstable", Range::at_least(1));
  io::add_run_flags(opts, o.run, "run directory: log.h5 and checkpoints/");
  opts.identity("seed").transient("out").transient("force");
  // The flags of one mode, refused without it (never silently ignored). The configs and grid scripts give
  // --gaugefix-every only to the conditions with GaugeFix (1, its default, is every other condition's too).
  auto keys_where = [](auto&& pred) {
    std::vector<std::string> keys;
    for (const Condition& c : conditions())
      if (pred(c)) keys.emplace_back(c.key);
    return keys;
  };
  opts.only_with("magnitude", "condition", keys_where([](const Condition& c) {
    return std::any_of(c.bundle.begin(), c.bundle.end(), [](const FlagValue& f) { return std::string(f.flag) == "magnitude"; });
  }));
  for (const StepHookRow& h : step_hook_rows())  // each hook's flags, gated to the conditions that run it
    for (const char* f : h.flags) opts.only_with(f, "condition", condition_keys_with(h.kind));
  opts.only_with("fit-memory", "fit-micro-batch", {"on"});
  for (const char* f : {"muon-lr", "muon-momentum", "muon-wd", "muon-qkv"}) opts.only_with(f, "optimizer", {"muon"});
  opts.only_with("projection-target", "grad-projection", {"approx", "exact"});
  // --profile-from's mode is a number (0 = off), which only_with's list of values cannot name.
  opts.check([&opts, &o] {
    const auto& given = opts.given();
    if (o.profile_from == 0 && std::find(given.begin(), given.end(), "profile-steps") != given.end())
      throw io::UsageError("--profile-steps applies only with --profile-from other than 0, but --profile-from is 0");
  });
  opts.implies([&o] {  // the condition's flag bundle
    std::vector<io::Implied> out;
    for (const FlagValue& f : condition(o.condition).bundle) out.push_back({f.flag, f.value, "--condition " + o.condition, "condition"});
    return out;
  });
}

std::vector<std::string> train_identity_keys() {
  TrainOptions o;
  io::Options opts("train", "");
  declare_train_options(opts, o);
  return opts.identity_names();
}

std::vector<std::string> train_transient_keys() {
  TrainOptions o;
  io::Options opts("train", "");
  declare_train_options(opts, o);
  return opts.transient_names();
}

std::optional<std::int64_t> synthetic_docs(const std::string& data) {
  const std::string prefix = "synthetic:";
  if (data.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string n = data.substr(prefix.size());
  std::int64_t docs = 0;
  try {
    docs = io::parse_int(n, "--data synthetic:N");
  } catch (const io::UsageError&) {
    docs = 0;
  }
  need(docs >= 100 && static_cast<double>(docs) <= static_cast<double>(data::kMaxSyntheticDocs),
       "--data synthetic:N needs 100 <= N <= " + std::to_string(data::kMaxSyntheticDocs) + " documents (got '" + n +
           "')");
  return docs;
}

void validate_train_options(const TrainOptions& given) {
  TrainOptions o = given;  // the declaration binds fields; checking through a copy leaves `given` as it is
  {
    io::Options opts("train", "");
    declare_train_options(opts, o);
    opts.validate();                          // every declared range and choice (the condition key among them)
    opts.apply_implied(/*strict=*/true);      // the condition's bundle holds
  }
  need(!o.run.out.empty(), "--out DIR is required (the run directory: log.h5 and checkpoints/)");
  std::error_code ec;
  need(!(o.resume && o.data.empty() && !fs::exists(o.run.out, ec)),
       "--resume: the run directory " + o.run.out + " does not exist (nothing to continue; a new run needs --data)");
  need(!o.data.empty(), "--data DIR is required (a directory with train.bin and val.bin; see gaugelab prepare)");
  const bool synthetic = synthetic_docs(o.data).has_value();
  if (!synthetic) {
    need(fs::exists(o.data, ec), "--data " + o.data + ": no such directory (a directory with train.bin and val.bin; "
                                 "see gaugelab prepare)");
    need(fs::is_directory(o.data, ec), "--data " + o.data + " is a file, not a directory: give the directory that "
                                       "holds train.bin and val.bin (or llm.c shards)");
  }
  // The run directory receives log.h5 and checkpoints/: never the data directory, one above it or inside it,
  // nor one holding the weights it starts from (--force or not).
  io::refuse_output_over_inputs(o.run.out, {synthetic ? std::string() : o.data, o.init_from});
  const Condition& c = condition(o.condition);
  need(has_hook(c, StepHookKind::gauge_fix) || o.state_transport == core::TransportMode::none,
       std::string("--state-transport ") + word(o.state_transport) + " only applies to conditions with GaugeFix (" +
           key_list(condition_keys_with(StepHookKind::gauge_fix)) + ")");
  need(o.gaugefix_mode == GaugeFixMode::head || o.state_transport == core::TransportMode::none,
       "--state-transport applies to --gaugefix-mode head only");
  // The data loader numbers every sequence a run draws in int64 (step x accumulation x ranks x batch).
  need(static_cast<double>(o.max_iters) * static_cast<double>(std::max<std::int64_t>(o.grad_accum, 1)) *
               static_cast<double>(o.batch_size) <= 0x1p60,
       "--max-iters x --grad-accum x --batch-size must stay below 2^60 sequences (the data order's numbering)");
  need(o.min_lr <= o.lr, "--min-lr must be in [0, --lr]");
  const std::int64_t decay = o.lr_decay_iters > 0 ? o.lr_decay_iters : o.max_iters;
  need(decay >= o.warmup_iters,
       "the warm-up (--warmup-iters " + std::to_string(o.warmup_iters) + ") is longer than the schedule (" +
           (o.lr_decay_iters > 0 ? "--lr-decay-iters " : "--max-iters ") + std::to_string(decay) +
           "): give --warmup-iters " + std::to_string(decay) + " or less (a tenth is usual), or more steps");
  need(o.batch_tokens == 0 || o.grad_accum == 1,
       "--batch-tokens and --grad-accum both set the global batch: give one of them");
  need(!o.replan || o.resume, "--replan only applies with --resume");
  need(o.attention == Attention::sdpa || o.attention == Attention::math || o.device.rfind("cuda", 0) == 0,
       std::string("--attention ") + word(o.attention) + " is a CUDA kernel: with --device " + o.device + " use sdpa or math");
  need(o.init_from.empty() || !o.resume, "--init-from starts a new run; --resume continues one (give one of them)");
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
