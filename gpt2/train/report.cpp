// What a run prints and records about itself: every setting at the start (llm.c prints them all), and
// the log's /summary and the closing lines at the end.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>

#include <ATen/ops/abs.h>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/train/conditions.hpp"
#include "gpt2/train/matmul_peak.hpp"
#include "gpt2/train/micro_batch.hpp"
#include "gpt2/train/not_measured.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/train/report.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/cpu_features.hpp"

namespace gaugelab::gpt2 {

namespace {

// Which path a piece with its own CUDA kernel takes in this run: the model's rule (kernel_path.hpp), not a copy.
std::string kernel_line(KernelPath k, const TrainRun& r) {
  const c10::ScalarType compute = r.precision == Precision::bf16 ? c10::ScalarType::BFloat16 : c10::ScalarType::Float;
  if (fused_kernel_runs(k, r.device, compute)) return "fused kernel";
  if (k == KernelPath::fused && r.device.is_cuda() && !cuda_kernels_built()) return "ATen (fused kernel not built)";
  return "ATen";
}

// A setting as %g writes it (std::to_string would print 1e-12 as 0.000000).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

namespace {
std::string gb3(double bytes) {  // GB to 3 significant digits
  char t[32];
  std::snprintf(t, sizeof t, "%.3g", bytes / 1e9);
  return t;
}
}  // namespace

namespace {

// llm.c's table of every setting: each declared option (the run's provenance, generated from
// declare_train_options) with its value as given or defaulted.
void print_option_table(const nlohmann::json& options) {
  if (!options.is_object() || options.empty()) return;
  std::size_t width = 6;
  for (const auto& [key, value] : options.items()) width = std::max(width, key.size());
  const std::string rule = "+-" + std::string(width, '-') + "-+-" + std::string(48, '-') + "-+\n";
  std::cout << rule << "| " << std::string("option") << std::string(width - 6, ' ') << " | value" << std::string(43, ' ')
            << " |\n" << rule;
  for (const auto& [key, value] : options.items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    std::cout << "| " << key << std::string(width - key.size(), ' ') << " | " << text
              << std::string(text.size() < 48 ? 48 - text.size() : 0, ' ') << " |\n";
  }
  std::cout << rule;
}

}  // namespace

void print_settings(const TrainRun& r, const std::string& resumed_from) {
  const TrainOptions& o = r.options;
  const ModelConfig& mc = r.model->config();
  print_option_table(r.prov.config);  // every option; the derived values follow
  std::cout << "model      " << describe_model(*r.model) << "\n";
  std::cout << "protocol   GELU " << word(mc.gelu) << ", " << (mc.bias ? "with" : "no") << " biases, QK-norm "
            << word(mc.qk_norm) << ", dropout " << mc.dropout
            << (o.init_from.empty() ? "" : ", weights from " + o.init_from) << "\n";
  const PrecisionWords regime = precision_words(r.precision);
  std::cout << "device     " << r.device.str() << ", " << regime.precision
            << (r.bf16_choice.empty() ? std::string() : std::string(" ") + regime.bf16_path + " (" + r.bf16_choice + ")")
            << ", attention "
            << describe_attention_backend(o.attention) << ", LM-head loss " << kernel_line(r.model->lm_head_kernel(), r)
            << ", residual+LayerNorm " << kernel_line(r.model->ln_kernel(), r)
            << (mc.lrm.any() ? ", multipliers' W_eff " + kernel_line(r.model->lrm_kernel(), r) : std::string())
            << ", threads " << r.prov.threads
            << ", world " << r.dist.world << " (" << r.dist.source << "), rank " << r.dist.rank << "\n";
  std::cout << "batch      " << r.micro_batch << " x " << mc.block_size << " tokens x " << r.grad_accum << " accumulation x "
            << r.dist.world << " ranks = " << r.tokens_per_step << " tokens/step, " << o.max_iters << " steps ("
            << static_cast<double>(r.tokens_per_step) * static_cast<double>(o.max_iters) << " tokens)\n";
  if (r.fit)
    std::cout << "fitted     micro-batch " << r.fit->batch << " of the step's " << r.fit->batch * r.fit->accum
              << " sequences per rank (--batch-size " << o.batch_size << "; " << r.fit->how << ", " << r.fit->probes
              << " tries): needs " << (std::isnan(r.fit->need_bytes) ? std::string("?") : gb3(r.fit->need_bytes)) << " of "
              << gb3(r.fit->budget_bytes) << " GB allowed (--fit-memory " << o.fit_memory << " of "
              << gb3(r.fit->device_bytes) << " GB); validation batches stay " << o.batch_size << "\n";
  std::cout << "schedule   lr " << o.lr << " warm-up " << o.warmup_iters << " cosine to " << o.min_lr << " at step "
            << r.schedule.decay_iters << "; AdamW (" << o.beta1 << ", " << o.beta2 << "), eps " << o.adam_eps
            << "; clip " << o.grad_clip << (o.clip_multipliers ? " (multipliers included)" : " (multipliers excluded)")
            << "; multiplier lr x" << o.multiplier_lr_scale
            << (o.optimizer == core::RuleKind::muon ? "; Muon on the hidden matrices (lr " + std::to_string(o.muon_lr) + ", momentum " +
                                            std::to_string(o.muon_momentum) + ", wd " + std::to_string(o.muon_wd) +
                                            ", qkv " + word(o.muon_qkv) + (r.device.is_cuda() ? ", NS5 bf16)" : ", NS5 fp32)")
                                      : std::string())
            << "\n";
  std::cout << "groups    ";
  for (const TrainOptimizer::Group& g : r.opt->groups())
    std::cout << " " << g.name << " (" << g.params.size() << " tensors, wd " << g.weight_decay << ", " << core::rule_kind_name(g.rule) << (g.clipped ? "" : ", not clipped")
              << ")";
  const ConditionLabel label = condition_label(*r.condition, o);
  std::cout << "\ncondition  " << o.condition << " (" << label.label
            << (label.reference.empty() ? ", a reference" : ", compared with " + label.reference) << "): "
            << describe_condition(*r.condition, o) << (r.has_heads ? "" : "; no Q/K row multipliers: no scales or drift")
            << (o.qk_gauge_init > 0 ? "; started off the balanced slice: log g_h ~ N(0, " + num(o.qk_gauge_init) +
                                          "^2) per head (--qk-gauge-init)"
                                    : std::string())
            << "\n";
  std::cout << "data       " << r.data_dir << " (" << r.train_files.size() << " train file(s), " << r.train->tokens()
            << " tokens; " << r.val_files.size() << " val file(s))"
            << (r.vocab_map.ids.empty() ? "" : ", compact vocabulary of " + std::to_string(r.vocab_map.ids.size()) + " ids")
            << "; validation " << o.eval_batches << " fixed batches every " << o.eval_every << " steps\n";
  std::cout << "instability spike: " << word(o.spike_on) << " grad norm > " << o.spike_factor << " x median of the previous " << o.spike_window
            << " norms after step " << o.warmup_iters << "; unstable: >= " << o.unstable_spikes << " spikes or diverged\n";
  std::cout << "run dir    " << o.run.out << " (log.h5, "
            << (o.ckpt_every > 0 ? "checkpoints/ every " + std::to_string(o.ckpt_every) + " steps, newest " +
                                       std::to_string(o.keep_ckpts) + " kept"
                                 : std::string("no checkpoints: --ckpt-every 0"))
            << ")" << (resumed_from.empty() ? "" : "; resumed from " + resumed_from) << "\n";
  std::cout << "MFU peak   " << r.peak_tflops << " TFLOP/s" << (o.peak_tflops > 0 ? " (given)" : " (matmul measured now)")
            << "; " << r.flops_per_token / 1e9 << " GFLOP/token" << std::endl;
}

TrainResult finish_train(TrainRun& r, double seconds) {
  const TrainOptions& o = r.options;
  const TrainState& s = r.state;
  TrainResult res;
  res.steps = s.step, res.tokens = s.tokens;
  res.best_val_loss = s.best_val_loss, res.final_val_loss = s.final_val_loss;
  res.final_drift_max = s.final_drift_max, res.final_drift_mean = s.final_drift_mean;
  res.n_spikes = s.n_spikes, res.diverged = s.diverged, res.interrupted = s.interrupted;
  res.stable = !s.diverged && s.n_spikes < o.unstable_spikes;
  if (r.dist.rank != 0) return res;
  io::RunLog& log = r.log->log();
  const Condition& cond = *r.condition;
  const ConditionLabel label = condition_label(cond, o);
  const bool fixes_gauge = has_hook(cond, StepHookKind::gauge_fix);
  log.set_summary("condition", o.condition);  // the key of conditions.hpp; figures and tables read these four
  log.set_summary("condition_label", label.label);
  log.set_summary("condition_title", label.title);
  log.set_summary("condition_reference", label.reference.empty() ? std::string("-") : label.reference);
  log.set_summary("condition_index", std::int64_t{label.index});
  log.set_summary("optimizer", std::string(word(o.optimizer)));
  log.set_summary("seed", static_cast<std::int64_t>(o.run.seed));
  log.set_summary("best_val_loss", s.best_val_loss);
  log.set_summary("final_val_loss", s.final_val_loss);
  log.set_summary("final_drift_max", s.final_drift_max);
  log.set_summary("final_drift_mean", s.final_drift_mean);
  log.set_summary("max_drift_max", r.has_heads ? s.max_drift_max : not_measured());
  log.set_summary("n_spikes", s.n_spikes);
  log.set_summary("stable", std::int64_t{res.stable ? 1 : 0});
  log.set_summary("diverged", std::int64_t{s.diverged ? 1 : 0});
  // which quantity stopped a diverged run: the loss itself, or only the gradient (the loss still finite)
  log.set_summary("stop_reason", s.diverged ? s.stop_reason : std::string(s.interrupted ? "interrupted" : "completed"));
  // max over layers and heads of |log(n_Q/n_K)| of the effective maps at the end (gaugefix.hpp)
  log.set_summary("final_eff_imbalance_max", at::abs(qk_effective_log_ratio(*r.model)).max().item<double>());
  log.set_summary("interrupted", std::int64_t{s.interrupted ? 1 : 0});
  log.set_summary("completed", std::int64_t{s.step == o.max_iters ? 1 : 0});
  log.set_summary("steps", s.step);
  log.set_summary("max_iters", o.max_iters);
  log.set_summary("tokens", s.tokens);
  log.set_summary("tokens_per_step", r.tokens_per_step);
  log.set_summary("micro_batch", r.micro_batch);  // sequences per micro-batch: --batch-size, or --fit-micro-batch's
  log.set_summary("grad_accum_rank", r.grad_accum);
  log.set_summary("world", std::int64_t{r.dist.world});
  log.set_summary("gaugefix_every", fixes_gauge ? o.gaugefix_every : std::int64_t{0});
  log.set_summary("qk_norm", std::string(word(o.qk_norm)));
  const bool sets_magnitude = std::any_of(cond.bundle.begin(), cond.bundle.end(),
                                          [](const FlagValue& f) { return std::string(f.flag) == "magnitude"; });
  log.set_summary("magnitude", std::string(sets_magnitude ? word(o.magnitude) : "-"));
  log.set_summary("state_transport", std::string(word(o.state_transport)));
  const PrecisionWords regime = precision_words(r.precision);  // the regime's two words, read together
  log.set_summary("precision", std::string(regime.precision));
  log.set_summary("bf16_mode", std::string(regime.bf16_path));  // native, emulated, or - for fp32
  log.set_summary("cpu_bf16", io::cpu_bf16_matmul_flags());  // this CPU's bf16 matmul instructions, or -
  log.set_summary("attention", std::string(word(o.attention)));
  // the CUDA caching allocator's peak since the start of this process (NaN on the CPU): a resumed run's is its own
  log.set_summary("peak_mem_gb", r.device.is_cuda() ? cuda_peak_memory_gb(r.device.index() < 0 ? 0 : r.device.index())
                                                    : std::numeric_limits<double>::quiet_NaN());
  log.set_summary("n_params", r.model->num_parameters());
  log.set_summary("n_multipliers", r.model->config().multiplier_count());
  log.set_summary("spike_rule", std::string(word(o.spike_on)) + " grad_norm > " + std::to_string(o.spike_factor) + " x median of previous " +
                                    std::to_string(o.spike_window) + " after step " + std::to_string(o.warmup_iters) +
                                    "; unstable if >= " + std::to_string(o.unstable_spikes) + " spikes or diverged");
  r.log->end_process(s.step, seconds);  // seconds_this_process, and the total over a resumed run's processes
  r.log->log().close();
  std::cout << "\n== gaugelab train: condition " << o.condition << ", seed " << o.run.seed << " ==\n"
            << "steps       " << s.step << " / " << o.max_iters << (s.diverged ? "  DIVERGED (" + s.stop_reason + ")" : "")
            << (!s.interrupted ? "" : o.ckpt_every > 0 ? "  interrupted (resume with --resume)" : "  interrupted (no checkpoint)")
            << "\n"
            << "tokens      " << s.tokens << " (" << r.tokens_per_step << " per step)\n"
            << "val loss    "
            << (std::isfinite(s.final_val_loss) ? "final " + num(s.final_val_loss) + ", best " + num(s.best_val_loss)
                                                : std::string("— (no evaluation finished yet: one every ") +
                                                      std::to_string(o.eval_every) + " steps and at the last)")
            << "\n"
            << "Q/K drift   "
            << (std::isfinite(s.final_drift_max) ? "final max " + num(s.final_drift_max) + ", mean " +
                                                       num(s.final_drift_mean) + "; max over run " + num(s.max_drift_max)
                                                 : std::string(r.has_heads ? "— (not sampled yet)" : "— (no Q/K row multipliers)"))
            << "\n"
            << "stability   " << (res.stable ? "stable" : "UNSTABLE") << " (" << s.n_spikes << " spikes)\n"
            << "time        " << seconds << " s in this process\n"
            << "log         " << train_log_path(o.run.out) << "\n"
            << "checkpoints " << (o.ckpt_every > 0 ? train_checkpoints_dir(o.run.out) : std::string("none (--ckpt-every 0)"))
            << "\n";
  return res;
}

}  // namespace gaugelab::gpt2
