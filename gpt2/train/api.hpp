// `gaugelab train` as a plain function with a LibTorch-free signature (the front door, cli/verb_train.cpp,
// includes only this). GPT-2 + learnable multipliers trained as in seed 000 §4.1 (nanoGPT conventions)
// under one of the conditions of gpt2/train/conditions.hpp (seed 000 §4.1's A, B, C and the controls beside
// them; `gaugelab train --help` lists every key): the table says what each condition decays, which flags it
// fixes and which per-step hooks it runs.
// The options are declared once, in declare_train_options (gpt2/train/options.cpp): type, range,
// choices (each an enum with its table of words: choices.hpp) and whether a resumed run must keep the value.
// The run directory (--out DIR) holds log.h5 (kind "gpt2/train") and checkpoints/ (run_dir.hpp, checkpoints.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/train/choices.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::io {
class Options;
}

namespace gaugelab::gpt2 {

struct TrainOptions {
  // --- data and run ---
  std::string data;                 // directory holding train.bin and val.bin (nanoGPT uint16 or llm.c format),
                                    // or llm.c shards *_train_*.bin and *_val_*.bin (all of them, in name order),
                                    // or "synthetic:N": the built-in synthetic corpus of N documents, prepared
                                    // into OUT/data on first use (deterministic: every run sees the same tokens)
  bool resume = false;              // continue the run in --out from its newest checkpoint
  bool replan = false;              // with --resume: accept a changed --max-iters that moves the cosine's end
                                    // (lr-decay-iters 0) and re-plan it from there; without it that is refused
  std::string init_from;            // start from these weights (our checkpoint or a Hugging Face GPT-2
                                    // directory; nanoGPT's init_from): the architecture comes from there
  io::RunFlags run;                 // --out DIR (required), --force, --threads, --seed (42: the paper's first seed)

  // --- model (a preset, then any size given explicitly; 0 = the preset's) ---
  std::string model = "tiny";       // ModelConfig::preset name: gpt2, tiny, nano, ...
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t n_embd = 0;
  std::int64_t block_size = 0;      // context length of the model and of the training sequences
  std::int64_t vocab_size = 0;      // 0 = the preset's (GPT-2: 50257); every token id must be below it
  std::string multipliers = "default";  // LrmPlacement spec (rows+columns on q k v attn_out mlp_in mlp_out)
  double dropout = 0.0;             // nanoGPT uses 0 for pretraining
  bool bias = false;                // linear and LayerNorm biases (nanoGPT's train.py: False; HF GPT-2: True)
  Gelu gelu = Gelu::erf;            // erf: nanoGPT's exact nn.GELU(); tanh: GPT-2 / Hugging Face's gelu_new
  QkNorm qk_norm = QkNorm::none;    // none, layernorm or rms: per-head normalisation of q and k (no parameters)
  bool compact_vocab = false;       // renumber the ids that occur in train.bin ∪ val.bin to 0..K−1 and use
                                    // vocabulary K (small corpora on a CPU; checkpoints record the id table)

  // --- batch and schedule (seed 000 §4.1, nanoGPT) ---
  std::int64_t batch_size = 12;     // sequences per micro-batch per rank
  std::int64_t grad_accum = 1;      // micro-batches per optimizer step in all (nanoGPT's global count): each of
                                    // the W ranks runs grad_accum / W of them; refused when W does not divide it
  std::int64_t batch_tokens = 0;    // tokens per optimizer step in all; sets grad_accum = batch_tokens /
                                    // (batch_size·block_size) (must divide); 0 = use --grad-accum
  Switch fit_micro_batch = Switch::off;  // on: the step's sequences re-split into the largest micro-batch that fits
                                        // (a divisor of them; same data, same mean loss: train/micro_batch.hpp)
  double fit_memory = 0.9;          // the share of the device's memory a fitted micro-batch may use
  std::int64_t max_iters = 20000;   // optimizer steps
  double lr = 6e-4;                 // peak learning rate
  double min_lr = 6e-5;             // end of the cosine
  std::int64_t warmup_iters = 2000; // linear warm-up steps
  std::int64_t lr_decay_iters = 0;  // cosine reaches min_lr here; 0 = max_iters

  // --- optimizer ---
  core::RuleKind optimizer = core::RuleKind::adamw;  // adamw, or muon: Muon on the hidden matrices, AdamW on the rest
                                   // (MuonWithAuxAdam; gpt2/train/muon.hpp)
  double muon_lr = 0.02;           // Muon's η at the schedule's peak (scaled by lr(it)/--lr each step)
  double muon_momentum = 0.95;     // Muon's β (Nesterov)
  double muon_wd = 0.01;           // Muon's decoupled weight decay (replaces --weight-decay on those matrices)
  MuonQkv muon_qkv = MuonQkv::split;  // split: W_Q, W_K, W_V orthogonalised apart; fused: c_attn as one matrix

  // --- AdamW and its parameter groups (gpt2/model/lrm.hpp ParamRole) ---
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double weight_decay = 0.1;        // matrices W̄
  double wd_multipliers = 2e-3;     // λ_lrm: every multiplier (Q/K ones only under condition A)
  double wd_embeddings = 0.1;       // token and position embeddings (nanoGPT and llm.c decay wte, tied to the
                                    // LM head, and wpe like every matrix)
  // biases and LayerNorm gains/biases: never decayed
  double multiplier_lr_scale = 1.0; // multipliers step at this × the scheduled lr (seed 002 allows its own
                                    // multiplier lr); 0 freezes them at their start values
  double grad_clip = 1.0;           // clip the clipped set's gradient norm to this (torch's rule); 0 = no clipping
  bool clip_multipliers = false;    // include multiplier gradients in the clipped set (seed 002 excludes them)

  // --- condition and GaugeFix ---
  std::string condition = "A";      // a key of conditions.hpp (condition_keys())
  std::int64_t gaugefix_every = 1;  // conditions with GaugeFix: after every N-th optimizer step
  GaugeFixMode gaugefix_mode = GaugeFixMode::head;  // GaugeFix: head (one g per head, seed 000) or coordinate (one g per
                                      // coordinate: the full diagonal gauge of the head)
  bool gaugefix_vo = false;         // GaugeFix: also balance each head's V row and O column multipliers
  double qk_gauge_init = 0;         // σ of a gauge-offset start (gaugefix.hpp): each head's Q/K multipliers
                                    // moved to r_Q/g, r_K·g, g = exp(σ·z), z ~ N(0,1), the function unchanged;
                                    // 0 = the balanced start of LRM (every multiplier 1)
  Magnitude magnitude = Magnitude::wd;  // the control of s_Q·s_K: set by the condition (D: wd, Dcap: cap)
  double qk_cap = 4.0;              // condition Dcap: the largest s_Q·s_K a head keeps
  double qk_clip_tau = 100;         // condition QKclip: τ, the largest attention logit a head keeps (Kimi K2's 100)
  QkClipOn qk_clip_on = QkClipOn::weights;  // QKclip: rescale the heads' W̄_Q, W̄_K rows (weights, as Kimi K2) or their
                                    // r_Q, r_K multipliers (the same function; the multipliers then carry it)
  QuotientGram quotient = QuotientGram::full;  // condition E: full Grams, or diagonal (their diagonals)
  std::int64_t quotient_every = 1;  // condition E with full: full Grams every k-th step, diagonal between
  double quotient_damping = 1e-3;   // condition E: λ added to each Gram
  bool quotient_vo = true;          // condition E: also correct the V/O pair
  QuotientScale quotient_scale = QuotientScale::none;  // condition E: none, or rms (each head's corrected Q/K and V/O
                                    // pair rescaled by one shared factor to the pair's raw RMS, condition Erms: the
                                    // correction's direction without its ~40x step inflation, which otherwise acts
                                    // as a learning-rate shift)
  GradProjection grad_projection = GradProjection::none;  // attention gradients made gauge-orthogonal before clipping and the
                                    // optimizer (seed 001 Alg. 2 / Remark 51; model/head_projection.hpp):
                                    // none, approx (Alg. 2) or exact (Sylvester); needs attention without multipliers
  ProjectionTarget projection_target = ProjectionTarget::gradient;  // what --grad-projection projects: gradient (before clipping; the
                                    // raw gradient is already horizontal by Prop. 38, so exact changes it only at
                                    // rounding) or update (the optimizer's step, after it: Adam's is not horizontal)
  double gaugefix_eps = 1e-12;      // ε of seed 000 eq. 4
  core::TransportMode state_transport = core::TransportMode::none;  // Adam state under the fix: none (the paper), vector, covector

  // --- where and how ---
  std::string device = "cpu";       // cpu, cuda, cuda:N (a data-parallel rank uses cuda:LOCAL_RANK)
  Attention attention = Attention::sdpa;  // sdpa (the fused kernel the device's PyTorch picks) or math (plain matmul,
                                    // mask, softmax, matmul: the same function to rounding; the decisive test of
                                    // whether CUDA's fused kernel causes the non-finite stops of the LR grid)
  Precision precision = Precision::fp32;  // fp32, or bf16 autocast (parameters and Adam state stay float32)
  Bf16Mode bf16_mode = Bf16Mode::automatic;  // how --precision bf16 is computed: native (autocast), emulated (float32 GEMMs
                                    // rounded to bf16 where autocast rounds, model/bf16_round.hpp), or auto (the
                                    // faster at the model's largest matmul, timed at start; native on CUDA)
  KernelPath lm_head_kernel = KernelPath::fused;  // the loss's softmax and gradient on CUDA in bf16: one fused kernel
                                         // (where built) or ATen's passes (model/lm_head_loss.hpp)
  // Residual add + LayerNorm, and the multipliers' W_eff, on CUDA in bf16: one fused kernel each way (where
  // built) or ATen's ops (model/residual_layer_norm.hpp, model/lrm_weight_bf16.hpp). fused since their parity
  // rows, kernel check and twin rows passed on an H200 (2026-11-30, gpt2/gpu-perf-notes.md, version 3).
  KernelPath ln_kernel = KernelPath::fused;
  KernelPath lrm_kernel = KernelPath::fused;
  Switch cuda_graph = Switch::off;  // on: each micro-step's forward and backward captured once and replayed
                                   // (train/step_graph.hpp); off: on an H200 it was no faster
                                   // (plain -1.7 %, multipliers +1.5 %, 2026-11-30)
  DistBackend dist_backend = DistBackend::automatic;  // data parallel: auto (nccl on cuda, gloo on cpu), gloo, nccl
  double dist_timeout_s = 600;      // a collective waiting longer than this fails the run (dead rank)

  // --- evaluation, logging, checkpoints ---
  std::int64_t eval_every = 250;    // validation loss after every N-th step (and after the last)
  std::int64_t eval_batches = 20;   // fixed validation batches, evenly spread over val.bin
  std::int64_t log_every = 10;      // progress line every N steps
  std::int64_t log_heads_every = 10;  // /heads, drift, attention-logit and log-partition samples every N steps
                                      // (and after the last); the probe is the first validation batch
  std::int64_t sample_tokens = 32;  // after each evaluation, this many greedy tokens appended to OUT/samples.txt
                                    // (train/evaluate.hpp; no random draws, so the trajectory is unchanged); 0 = none
  std::int64_t sample_prompt = 8;   // prompt: the first N tokens of the first validation window
  std::int64_t ckpt_every = 1000;   // checkpoint after every N-th step (and on SIGTERM/SIGINT and at the end);
                                    // 0 = never, not even then
  std::int64_t keep_ckpts = 3;      // newest checkpoints kept
  double peak_tflops = 0;           // MFU denominator; 0 = a matmul peak measured at start on this device
  std::int64_t profile_from = 0;    // steps profile_from .. +profile_steps-1 traced to OUT/profile.json (0 = off;
  std::int64_t profile_steps = 2;   // train/step_profiler.hpp): the CPU operators and the device's kernels

  // --- instability rule ---
  SpikeOn spike_on = SpikeOn::total;  // the norm the rule watches: total (every parameter, the paper's), clipped
                                    // (the clipped set) or multipliers
  double spike_factor = 10;         // step is a spike if that norm > factor × running median (after warm-up)
  std::int64_t spike_window = 100;  // steps in the running median
  std::int64_t unstable_spikes = 10;  // a run with at least this many spikes (or diverged) is unstable
};

/// Declares every `train` option on `opts`, bound to the fields of `o` (whose values are the defaults):
/// name, help, range or choices, and identity (a resumed run must keep it); the condition's flag bundle
/// as implications. The front door parses with it; validate_train_options checks with it.
void declare_train_options(io::Options& opts, TrainOptions& o);
/// The options a resumed run must keep (those declared identity()).
std::vector<std::string> train_identity_keys();
/// The options marked transient (--resume, --out, --force, ...): a resumed run neither takes them from the run it
/// continues nor reports their change.
std::vector<std::string> train_transient_keys();

/// Checks every setting (the declared ranges and choices, the condition's bundle) and the cross-field
/// rules; throws io::UsageError naming the flag.
void validate_train_options(const TrainOptions& o);
/// --data "synthetic:N": N, the documents of the built-in synthetic corpus; nullopt when `data` names a directory.
/// Throws io::UsageError when N is no integer in [100, data::kMaxSyntheticDocs].
std::optional<std::int64_t> synthetic_docs(const std::string& data);

/// The settings a run was started with, as its newest readable checkpoint recorded them (config.json's
/// trainer.options: flag name -> value, as Options::to_json() writes it), for `train --resume --out DIR`
/// without the rest of the command. Null when OUT holds no checkpoint with a readable config.json (the
/// resume then names what is wrong).
nlohmann::json saved_run_options(const std::string& out);

/// Micro-batches per optimizer step in all: --batch-tokens / (batch_size·block_size) when given, else
/// --grad-accum. block_size is the model's context. Throws io::UsageError when it does not divide.
std::int64_t global_grad_accum(const TrainOptions& o, std::int64_t block_size);
/// This rank's share of global_grad_accum(); throws io::UsageError naming both numbers when `world`
/// does not divide it.
std::int64_t rank_grad_accum(const TrainOptions& o, std::int64_t block_size, int world);

struct TrainResult {
  std::int64_t steps = 0;           // optimizer steps completed (in the whole run, resumes included)
  std::int64_t tokens = 0;          // training tokens consumed
  double best_val_loss = 0;         // NaN without an evaluation
  double final_val_loss = 0;
  double final_drift_max = 0;
  double final_drift_mean = 0;
  std::int64_t n_spikes = 0;
  bool stable = true;
  bool diverged = false;            // a non-finite loss or gradient norm stopped the run
  bool interrupted = false;         // SIGTERM/SIGINT: checkpoint written, resume with --resume
};

/// `gaugelab train`. `prov` carries argv and the resolved options; kind and threads are set here.
TrainResult run_train(const TrainOptions& options, io::Provenance prov);

}  // namespace gaugelab::gpt2
