// The loop's bookkeeping after a step: spikes, tokens, timing, the log row, and the progress line.
#include "gpt2/train/progress.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

namespace gaugelab::gpt2 {

namespace {

// The gradient norm the spike rule watches (--spike-on).
double spike_norm(const TrainOptions& o, const GradNorms& n) {
  return o.spike_on == SpikeOn::clipped ? n.clipped : o.spike_on == SpikeOn::multipliers ? n.multipliers : n.total;
}

std::string fmt_duration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = static_cast<long>(s);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

}  // namespace

void end_step(TrainRun& run, LoopState& loop, StepWork& s) {
  TrainState& st = run.state;
  StepRow& row = s.row;
  row.spike = run.spikes.observe(row.step, spike_norm(run.options, s.norms));
  st.n_spikes += row.spike ? 1 : 0;
  st.tokens += run.tokens_per_step;
  st.step = row.step;
  row.tokens = static_cast<double>(st.tokens);
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  row.tokens_per_s = static_cast<double>(run.tokens_per_step) / dt;
  loop.ema_step_s = std::isfinite(loop.ema_step_s) ? 0.9 * loop.ema_step_s + 0.1 * dt : dt;
  const bool rank0 = run.dist.rank == 0;
  if (!std::isfinite(row.val_loss) && !s.sample && loop.slowdown.observe(dt) && rank0)
    std::cerr << "train: step " << row.step << ": steps now take " << std::lround(loop.slowdown.ratio())
              << "x their best time; other work on these cores? (threads spinning on busy cores slow "
                 "everything: a smaller --threads may help)\n";
  if (rank0) run.log->append(row);
}

void print_progress(const TrainRun& run, const LoopState& loop, const StepWork& s) {
  const TrainOptions& o = run.options;
  const std::int64_t step = s.row.step;
  if (run.dist.rank != 0 || !(step % o.log_every == 0 || s.last || step == loop.first_step + 1)) return;
  const double tps = static_cast<double>(run.tokens_per_step) / loop.ema_step_s;
  const double mfu = model_flops_utilization(run.flops_per_token, tps, run.peak_tflops, run.dist.world);
  char drift[32] = "-";
  if (std::isfinite(run.state.final_drift_max)) std::snprintf(drift, sizeof drift, "%.2e", run.state.final_drift_max);
  char line[320];
  std::snprintf(line, sizeof line,
                "step %lld/%lld | loss %.4f | lr %.3e | gnorm %.3f%s | drift %s | %.0f tok/s | MFU %.1f%% | ETA %s",
                static_cast<long long>(step), static_cast<long long>(o.max_iters), s.row.loss, s.row.lr,
                s.row.grad_norm, s.row.spike ? " (spike)" : "", drift, tps, 100.0 * mfu,
                fmt_duration(loop.ema_step_s * static_cast<double>(o.max_iters - step)).c_str());
  std::cout << line;
  if (std::isfinite(s.row.val_loss)) std::cout << " | val " << s.row.val_loss;
  std::cout << std::endl;
}

}  // namespace gaugelab::gpt2
