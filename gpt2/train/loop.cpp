// `gaugelab train`: the loop. Setup (model, optimizer, data, log, resume) is in setup.cpp; this
// file runs the steps: accumulate micro-batches -> (average over ranks) -> (gradient projection) -> clip
// -> the optimizer's step, with the condition's hooks around it (step_hooks.hpp: the quotient correction,
// GaugeFix, the cap, QK-Clip) -> samples, evaluation, log row, progress line, checkpoints.
// Its stations, each in a file of its own: setup.cpp (and setup_stations.hpp), step_rng.cpp, step_hooks.hpp,
// evaluate.cpp, samples.cpp, resume.cpp (save_state: the checkpoint resuming reads), report.cpp (the summary).
// The tables it reads at several stations (conditions.cpp) and the lower floors' helpers (model/runtime.cpp's
// autocast, io/atomic_file.cpp) are visited from more than one station by design.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <limits>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>

#include "gpt2/model/head_projection.hpp"
#include "gpt2/train/checkpoints.hpp"
#include "gpt2/train/qk_balance.hpp"
#include "gpt2/train/samples.hpp"
#include "gpt2/train/setup.hpp"
#include "gpt2/train/step_graph.hpp"
#include "gpt2/train/step_hooks.hpp"
#include "gpt2/train/step_profiler.hpp"
#include "io/stop_signal.hpp"

namespace gaugelab::gpt2 {

namespace {

// The gradient norm the spike rule watches (--spike-on).
double spike_norm(const TrainOptions& o, const GradNorms& n) {
  return o.spike_on == "clipped" ? n.clipped : o.spike_on == "multipliers" ? n.multipliers : n.total;
}

std::string fmt_duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = static_cast<long>(s);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

double nan() { return std::numeric_limits<double>::quiet_NaN(); }

}  // namespace

TrainResult run_train(const TrainOptions& o, io::Provenance prov) {
  TrainRun run = setup_train(o, std::move(prov));
  TrainState& st = run.state;
  const TrainDist& dist = run.dist;
  const bool rank0 = dist.rank == 0;
  const std::vector<std::unique_ptr<StepHook>> hooks = make_step_hooks(condition(o.condition), o);
  const GradProjection grad_projection = parse_grad_projection(o.grad_projection);
  const bool project_update = grad_projection != GradProjection::none && o.projection_target == "update";
  const at::Tensor probe = [&] {  // the observables' fixed batch: the first validation batch's inputs
    const at::Tensor b = run.val->batch(0);  // [batch-size, T+1]; a fitted micro-batch below it: its first rows
    const std::int64_t rows = run.micro_batch > 0 ? std::min(b.size(0), run.micro_batch) : b.size(0);
    return b.narrow(0, 0, rows).narrow(1, 0, b.size(1) - 1).to(run.device);
  }();
  const MomentLookup lookup = [&](const at::Tensor& p) { return run.opt->moments(p); };
  const std::vector<at::Tensor> params = run.opt->parameters();
  io::StopSignals signals;  // a stop also ends an evaluation or a sample early (setup.cpp, samples.cpp)
  double ema_step_s = nan();
  SlowdownWatch slowdown;  // plain steps' time against their best: other work on our cores?
  // Samples after each evaluation (rank 0): the prompt, the tokenizer if installed, the file from this step on.
  std::vector<std::int64_t> sample_prompt;
  std::optional<data::Gpt2Tokenizer> sample_tok;
  if (rank0 && o.sample_tokens > 0) {
    const at::Tensor b = run.val->batch(0).to(at::kCPU);
    for (std::int64_t j = 0; j < std::min<std::int64_t>(o.sample_prompt, b.size(1)); ++j)
      sample_prompt.push_back(b[0][j].item<std::int64_t>());
    const std::string ranks = data::Gpt2Tokenizer::default_ranks_path();
    if (std::filesystem::exists(ranks)) sample_tok.emplace(data::Gpt2Tokenizer::from_tiktoken(ranks));
    keep_samples_up_to(train_samples_path(o.run.out), st.step);  // a resumed run rewrites what follows its step
  }
  StepProfiler profiler(o.profile_from, o.profile_steps, o.run.out, run.device, rank0);
  // --cuda-graph on: every micro-step a replay of one captured forward + backward (train/step_graph.hpp).
  std::unique_ptr<MicroStepGraph> graph;
  if (o.cuda_graph == "on")
    graph = std::make_unique<MicroStepGraph>(*run.model, params, run.precision, run.grad_accum);
  const auto t_start = std::chrono::steady_clock::now();
  const std::int64_t first_step = st.step;

  for (std::int64_t it = st.step; it < o.max_iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::int64_t step = it + 1;  // 1-based: the row's step
    const bool last = step == o.max_iters;
    profiler.begin(step);
    reseed_step_rng(o.run.seed, it, dist.rank, run.device);
    run.model->train(true);
    run.opt->zero_grad();
    at::Tensor loss_sum, inputs;  // inputs: the last micro-batch's [B, T] (the hooks' batch)
    for (std::int64_t micro = 0; micro < run.grad_accum; ++micro) {
      const at::Tensor batch = run.train->batch(it, micro).to(run.device, /*non_blocking=*/true);
      const std::int64_t T = batch.size(1) - 1;
      inputs = batch.narrow(1, 0, T);
      at::Tensor loss;
      try {
        if (graph) loss = graph->run(inputs, batch.narrow(1, 1, T), micro == 0, step);  // undefined: another shape
        if (!loss.defined()) {
          {
            AutocastScope autocast(run.device, run.precision);
            loss = run.model->loss(inputs, batch.narrow(1, 1, T));
          }
          (loss / static_cast<double>(run.grad_accum)).backward();
        }
      } catch (const c10::OutOfMemoryError& e) {  // a GPU that cannot hold the micro-batch: one line, the flags
        if (run.fit)
          throw std::runtime_error(std::string("out of memory on ") + run.device.str() + " in a fitted micro-batch of " +
                                   std::to_string(run.micro_batch) + " x " + std::to_string(T) + " tokens (" +
                                   std::string(e.what_without_backtrace()).substr(0, std::string(e.what_without_backtrace()).find('\n')) + "): lower --fit-memory (now " +
                                   std::to_string(o.fit_memory) + ")");
        throw out_of_memory_error(e.what_without_backtrace(), run.micro_batch, T, run.grad_accum, run.device);
      }
      loss_sum = loss_sum.defined() ? loss_sum + loss.detach() : loss.detach();
    }
    if (run.hook_batches) {  // fitted to another split: the hooks see what the unfitted split's last micro-batch held
      at::Tensor hb = run.hook_batches->batch(it, run.hook_micro);  // [batch-size, T+1]
      if (run.micro_batch < hb.size(0)) hb = hb.narrow(0, 0, run.micro_batch);  // --batch-size itself does not fit
      inputs = hb.narrow(1, 0, hb.size(1) - 1).to(run.device);
    }
    double loss_v = loss_sum.item<double>() / static_cast<double>(run.grad_accum);
    if (dist.active()) {
      dist.average_gradients(params);
      loss_v = dist.all_reduce_mean(loss_v);
    }
    if (!project_update) project_attention_gradients(*run.model, grad_projection);  // a no-op for none
    const GradNorms norms = run.opt->clip_grad_norm(o.grad_clip);
    const double grad_norm = norms.total;
    const double lr = run.schedule.at(it);
    StepRow row;
    row.step = step, row.loss = loss_v, row.lr = lr, row.grad_norm = grad_norm;
    row.grad_norm_clipped = norms.clipped, row.grad_norm_multipliers = norms.multipliers;
    row.val_loss = row.drift_max = row.drift_mean = nan();
    if (!std::isfinite(loss_v) || !std::isfinite(grad_norm)) {  // divergence: stop before the update
      st.diverged = true;
      st.stop_reason = std::isfinite(loss_v) ? "non-finite gradient" : "non-finite loss";
      row.spike = true;
      row.tokens = static_cast<double>(st.tokens);
      if (rank0) run.log->append(row);
      if (rank0)
        std::cerr << "train: step " << step << ": non-finite " << (std::isfinite(loss_v) ? "gradient norm" : "loss")
                << " (loss " << loss_v << ", grad norm " << grad_norm << "); stopping, "
                << (latest_train_checkpoint(o.run.out) ? "the last good checkpoint is kept"
                                                      : "no checkpoint was written before it (--ckpt-every)")
                << "\n";
      break;
    }
    const bool sample = step % o.log_heads_every == 0 || last;
    const std::vector<at::Tensor> before = sample ? run.opt->snapshot() : std::vector<at::Tensor>{};
    const StepContext ctx{*run.model, o, it, inputs, lookup, dist.active() ? dist.all_reduce_max : nullptr};
    for (const auto& h : hooks) h->before_update(ctx);
    const AttentionWeights weights_before = project_update ? attention_weights(*run.model) : AttentionWeights{};
    run.opt->step(lr, lr / o.lr);  // Muon's η follows the same warm-up and cosine
    if (project_update) project_attention_updates(*run.model, weights_before, grad_projection);
    for (const auto& h : hooks) h->correct_update(ctx);   // part of the step (condition E's correction)
    if (sample) row.update_ratio = run.opt->update_ratios(before);
    for (const auto& h : hooks) row.after_fix = h->after_update(ctx) || row.after_fix;  // GaugeFix, cap, clip
    row.attn_logit_max = row.logz_mean = nan();
    if (sample) {
      QkScales s;
      if (run.has_heads) {
        s = qk_head_scales(*run.model);
        const DriftValues d = qk_drift(s);
        row.drift_max = d.max, row.drift_mean = d.mean;
        st.final_drift_max = d.max, st.final_drift_mean = d.mean;
        st.max_drift_max = std::max(st.max_drift_max, d.max);
      }
      run.model->train(false);
      const at::Tensor attn = run.model->attention_logit_max(probe);  // [L, H] on the CPU
      row.attn_logit_max = attn.max().item<double>();
      row.logz_mean = run.model->log_partition_mean(probe);
      run.model->train(true);
      if (rank0) run.log->append_heads(step, s.s_q, s.s_k, attn, qk_effective_log_ratio(*run.model));
    }
    profiler.end(step);  // the step proper and its sampled observables; evaluation and checkpoints stay out
    if (step % o.eval_every == 0 || last) {
      row.val_loss = evaluate(run);
      if (!sample_prompt.empty()) {
        const std::string line = sample_line(step, sample_prompt, greedy_continue(*run.model, sample_prompt, o.sample_tokens),
                                             run.vocab_map.ids, sample_tok ? &*sample_tok : nullptr);
        append_sample_line(train_samples_path(o.run.out), line);
        std::cout << "sample " << line << "\n";
      }
      st.final_val_loss = row.val_loss;
      if (std::isfinite(row.val_loss) && !(st.best_val_loss <= row.val_loss)) st.best_val_loss = row.val_loss;
    }
    row.spike = run.spikes.observe(step, spike_norm(o, norms));
    st.n_spikes += row.spike ? 1 : 0;
    st.tokens += run.tokens_per_step;
    st.step = step;
    row.tokens = static_cast<double>(st.tokens);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    row.tokens_per_s = static_cast<double>(run.tokens_per_step) / dt;
    ema_step_s = std::isfinite(ema_step_s) ? 0.9 * ema_step_s + 0.1 * dt : dt;
    if (!std::isfinite(row.val_loss) && !sample && slowdown.observe(dt) && rank0)
      std::cerr << "train: step " << step << ": steps now take " << std::lround(slowdown.ratio())
                << "x their best time; other work on these cores? (threads spinning on busy cores slow "
                   "everything: a smaller --threads may help)\n";
    if (rank0) run.log->append(row);
    if (rank0 && (step % o.log_every == 0 || last || step == first_step + 1)) {
      const double tps = static_cast<double>(run.tokens_per_step) / ema_step_s;
      const double mfu = model_flops_utilization(run.flops_per_token, tps, run.peak_tflops, run.dist.world);
      char drift[32] = "-";
      if (std::isfinite(st.final_drift_max)) std::snprintf(drift, sizeof drift, "%.2e", st.final_drift_max);
      char line[320];
      std::snprintf(line, sizeof line,
                    "step %lld/%lld | loss %.4f | lr %.3e | gnorm %.3f%s | drift %s | %.0f tok/s | MFU %.1f%% | ETA %s",
                    static_cast<long long>(step), static_cast<long long>(o.max_iters), loss_v, lr, grad_norm,
                    row.spike ? " (spike)" : "",
                    drift, tps,
                    100.0 * mfu, fmt_duration(ema_step_s * static_cast<double>(o.max_iters - step)).c_str());
      std::cout << line;
      if (std::isfinite(row.val_loss)) std::cout << " | val " << row.val_loss;
      std::cout << std::endl;
    }
    int sig = signals.requested();
    if (dist.active()) sig = dist.all_reduce_mean(sig != 0 ? 1.0 : 0.0) > 0 ? (sig != 0 ? sig : SIGTERM) : 0;
    if (o.ckpt_every > 0 && (sig != 0 || step % o.ckpt_every == 0 || last)) save_state(run);
    if (sig != 0) {
      st.interrupted = true;
      if (rank0)
        std::cerr << "train: " << io::stop_signal_name(sig) << " at step " << step
                  << (o.ckpt_every > 0 ? ": checkpoint written; continue with: gaugelab train --resume --out " + o.run.out
                                       : std::string(": stopped without a checkpoint (--ckpt-every 0)"))
                  << "\n";
      break;
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return finish_train(run, secs);
}

}  // namespace gaugelab::gpt2
