// `gaugelab train`: the loop, as llm.c writes it, one named step per line. Each verb lives in its station:
//   begin_step          micro_steps.hpp: profiler window, the step's RNG, train mode, zeroed gradients
//   compute_gradients   micro_steps.hpp: forward + backward per micro-batch (eager or a CUDA graph), mean over ranks
//   clip_gradients      update.hpp: gradient projection and clipping
//   stop_if_diverged    update.hpp: a non-finite loss or gradient ends the run before the update
//   apply_update        update.hpp: the optimizer's step with the condition's hooks (step_hooks.hpp) around it
//   observe_heads       observe.hpp: drift, attention logits, log-partition on the sampled steps
//   evaluate_and_sample evaluate.hpp: validation loss and a text sample every --eval-every steps
//   end_step            progress.hpp: spikes, tokens, timing, the log row
//   print_progress      progress.hpp: the progress line
//   checkpoint_or_stop  checkpoints.hpp: checkpoints, and a requested stop
// Set-up before the loop is setup_train (setup.hpp); the summary after it finish_train (report.hpp).
#include <algorithm>
#include <chrono>
#include <filesystem>

#include "gpt2/dist/dist_failure.hpp"
#include "gpt2/train/checkpoints.hpp"
#include "gpt2/train/evaluate.hpp"
#include "gpt2/train/loop_state.hpp"
#include "gpt2/train/micro_steps.hpp"
#include "gpt2/train/observe.hpp"
#include "gpt2/train/progress.hpp"
#include "gpt2/train/report.hpp"
#include "gpt2/train/run_dir.hpp"
#include "gpt2/train/setup.hpp"
#include "gpt2/train/update.hpp"

namespace gaugelab::gpt2 {

namespace {

// The observables' fixed batch: the first validation batch's inputs [rows, T]; a fitted micro-batch below
// --batch-size: its first rows.
at::Tensor probe_batch(const TrainRun& run) {
  const at::Tensor b = run.val->batch(0);  // [batch-size, T+1]
  const std::int64_t rows = run.micro_batch > 0 ? std::min(b.size(0), run.micro_batch) : b.size(0);
  return b.narrow(0, 0, rows).narrow(1, 0, b.size(1) - 1).to(run.device);
}

}  // namespace

LoopState::LoopState(TrainRun& run)
    : hooks(make_step_hooks(*run.condition, run.options)),
      grad_projection(run.options.grad_projection),
      project_update(grad_projection != GradProjection::none && run.options.projection_target == ProjectionTarget::update),
      probe(probe_batch(run)),
      lookup([&run](const at::Tensor& p) { return run.opt->moments(p); }),
      params(run.opt->parameters()),
      profiler(run.options.profile_from, run.options.profile_steps, run.options.run.out, run.device, run.dist.rank == 0),
      t_start(std::chrono::steady_clock::now()),
      first_step(run.state.step) {
  const TrainOptions& o = run.options;
  // Samples after each evaluation (rank 0): the prompt, the tokenizer if installed, the file from this step on.
  if (run.dist.rank == 0 && o.sample_tokens > 0) {
    const at::Tensor b = run.val->batch(0).to(at::kCPU);
    for (std::int64_t j = 0; j < std::min<std::int64_t>(o.sample_prompt, b.size(1)); ++j)
      sample_prompt.push_back(b[0][j].item<std::int64_t>());
    const std::string ranks = data::Gpt2Tokenizer::default_ranks_path();
    if (std::filesystem::exists(ranks)) sample_tok.emplace(data::Gpt2Tokenizer::from_tiktoken(ranks));
    keep_samples_up_to(train_samples_path(o.run.out), run.state.step);  // a resumed run rewrites what follows its step
  }
  if (o.cuda_graph == Switch::on) graph = std::make_unique<MicroStepGraph>(*run.model, params, run.precision, run.grad_accum);
  t_start = std::chrono::steady_clock::now();
}

TrainResult run_train(const TrainOptions& o, io::Provenance prov) {
  TrainRun run;
  bool set_up = false;
  try {
    run = setup_train(o, std::move(prov));  // moved in: no member of TrainRun points into another
    set_up = true;
    LoopState loop(run);
    catch_up_sample(run, loop);  // a stop cut the checkpoint's sample short
    for (std::int64_t it = run.state.step; it < o.max_iters; ++it) {
      StepWork s = begin_step(run, loop, it);
      compute_gradients(run, loop, s);
      clip_gradients(run, loop, s);
      if (stop_if_diverged(run, s)) break;
      apply_update(run, loop, s);
      observe_heads(run, loop, s);
      loop.profiler.end(s.row.step);  // the step proper and its observables; evaluation and checkpoints stay out
      evaluate_and_sample(run, loop, s);
      end_step(run, loop, s);
      print_progress(run, loop, s);
      if (checkpoint_or_stop(run, loop.signals.requested(), s.row.step, s.last)) break;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loop.t_start).count();
    return finish_train(run, seconds);
  } catch (const DistFailure& e) {
    // A collective that failed because a rank is gone or late ends this rank too, its line saying how to continue
    // (in the set-up: from no checkpoint of this process). Before the set-up's barrier the run directory may still
    // hold an older run's checkpoints (rank 0 clears them): it is read past the set-up, or for a --resume run.
    throw with_resume_hint(e, o, set_up ? run.last_checkpoint_step : -1, set_up || o.resume);
  }
}

}  // namespace gaugelab::gpt2
