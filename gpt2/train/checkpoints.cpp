// The run directory's checkpoints (checkpoints.hpp): loading the newest whole one, and writing the one of a step
// with the trainer state it carries.
#include "gpt2/train/checkpoints.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <vector>

#include "gpt2/train/not_measured.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/stop_signal.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;

void save_train_checkpoint(const std::string& out, std::int64_t step, GPT& model, const TrainOptimizer& opt,
                           const Vocabulary& vocab, const nlohmann::json& trainer, std::int64_t keep) {
  const fs::path dir = train_checkpoints_dir(out);
  const std::string name = train_checkpoint_name(step);
  const fs::path tmp = dir / (".tmp-" + name), final_dir = dir / name;
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  save_checkpoint(tmp.string(), model, vocab, {{"trainer", trainer}});
  safetensors::write_file((tmp / "optimizer.safetensors").string(), opt.state_tensors(),
                          {{"format", "gaugelab-gpt2-adamw"}});
  fs::remove_all(final_dir);  // a checkpoint of the same step from an earlier attempt
  fs::rename(tmp, final_dir);
  const std::vector<std::string> newest_first = train_checkpoints_newest_first(out);
  const auto n_keep = static_cast<std::size_t>(std::max<std::int64_t>(keep, 1));
  for (std::size_t i = n_keep; i < newest_first.size(); ++i) fs::remove_all(newest_first[i]);
}

// The newest checkpoint of the run whose model and optimizer state both load, with them loaded.
// A damaged newer checkpoint is skipped with a line saying so and, once an older one has loaded,
// renamed to damaged-step_* beside it (kept, never again picked). None loading is an error.
std::tuple<std::optional<std::string>, std::optional<ModelDir>, std::optional<safetensors::File>>
newest_loadable_checkpoint(const std::string& out, c10::Device device, bool rank0) {
  const std::optional<std::string> newest = latest_train_checkpoint(out);  // also clears .tmp-* leftovers
  if (!newest) return {};
  std::vector<std::string> skipped;
  std::string first_error;
  for (const std::string& dir : train_checkpoints_newest_first(out)) {
    try {
      ModelDir ck = read_model_dir(dir, device, ModelDirKinds::checkpoint);
      safetensors::File opt = safetensors::read_file(dir + "/optimizer.safetensors");
      if (rank0)
        for (const std::string& bad : skipped) {
          const fs::path p(bad);
          std::error_code ec;
          fs::rename(p, p.parent_path() / ("damaged-" + p.filename().string()), ec);
        }
      return {dir, std::move(ck), std::move(opt)};
    } catch (const std::exception& e) {
      if (rank0) std::cerr << "train: skipping checkpoint " << dir << ": " << e.what() << "\n";
      if (first_error.empty()) first_error = e.what();
      skipped.push_back(dir);
    }
  }
  throw std::runtime_error(out + ": no checkpoint loads (the newest: " + first_error + ")");
}

namespace {

// A measured value as config.json holds it: null where it is not finite (not measured, or diverged).
nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The measured value under `k` of the trainer state `j`; not measured where it is null or missing.
double number_or_not_measured(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_number() ? j[k].get<double>() : not_measured();
}

}  // namespace

nlohmann::json train_state_json(const TrainRun& r) {
  const TrainState& s = r.state;
  return {{"step", s.step},
          {"tokens", s.tokens},
          {"best_val_loss", json_number(s.best_val_loss)},
          {"final_val_loss", json_number(s.final_val_loss)},
          {"final_drift_max", json_number(s.final_drift_max)},
          {"final_drift_mean", json_number(s.final_drift_mean)},
          {"max_drift_max", s.max_drift_max},
          {"n_spikes", s.n_spikes},
          {"eval_pending", s.eval_pending},
          {"spike_window", r.spikes.window()},
          {"world", r.dist.world},
          {"tokens_per_step", r.tokens_per_step},
          {"micro_batch", r.micro_batch},        // sequences per micro-batch (--fit-micro-batch: kept on resume)
          {"grad_accum_rank", r.grad_accum},     // micro-batches per step on each rank
          {"schedule", {{"lr", r.schedule.lr}, {"min_lr", r.schedule.min_lr}, {"warmup", r.schedule.warmup},
                        {"decay_iters", r.schedule.decay_iters}, {"max_iters", r.options.max_iters}}},
          {"rng", "CPU and CUDA generators reseeded from (seed, step, rank) before every step"},
          {"options", r.prov.config}};
}

TrainState train_state_from_json(const nlohmann::json& j) {
  TrainState s;
  s.step = j.at("step").get<std::int64_t>();
  s.tokens = j.at("tokens").get<std::int64_t>();
  s.best_val_loss = number_or_not_measured(j, "best_val_loss");
  s.final_val_loss = number_or_not_measured(j, "final_val_loss");
  s.final_drift_max = number_or_not_measured(j, "final_drift_max");
  s.final_drift_mean = number_or_not_measured(j, "final_drift_mean");
  s.max_drift_max = number_or_not_measured(j, "max_drift_max");
  s.n_spikes = j.at("n_spikes").get<std::int64_t>();
  s.eval_pending = j.value("eval_pending", false);  // checkpoints from before the key: nothing pending
  return s;
}

void save_state(TrainRun& r) {
  if (r.dist.rank == 0) {
    r.log->log().flush();
    // --compact-vocab: the map; --vocab-size below GPT-2's without it: the data's own ids.
    const Vocabulary vocab{std::vector<std::int64_t>(r.vocab_map.ids.begin(), r.vocab_map.ids.end()), {},
                           r.vocab_map.ids.empty() && r.model->config().vocab_size < kGpt2Vocab};
    const nlohmann::json trainer = train_state_json(r);
    save_train_checkpoint(r.options.run.out, r.state.step, *r.model, *r.opt, vocab, trainer, r.options.keep_ckpts);
    r.last_checkpoint_step = r.state.step;
  }
  if (r.dist.active()) r.dist.barrier();
  r.last_checkpoint_step = r.state.step;
}

bool checkpoint_or_stop(TrainRun& run, int signal, std::int64_t step, bool last) {
  const TrainOptions& o = run.options;
  if (run.dist.active())  // every rank stops at the same step when any rank was asked to
    signal = run.dist.all_reduce_mean(signal != 0 ? 1.0 : 0.0) > 0 ? (signal != 0 ? signal : SIGTERM) : 0;
  if (o.ckpt_every > 0 && (signal != 0 || step % o.ckpt_every == 0 || last)) save_state(run);  // 0: never
  if (signal == 0) return false;
  run.state.interrupted = true;
  if (run.dist.rank == 0)
    std::cerr << "train: " << io::stop_signal_name(signal) << " at step " << step
              << (o.ckpt_every > 0 ? ": checkpoint written; continue with: gaugelab train --resume --out " + o.run.out
                                   : std::string(": stopped without a checkpoint (--ckpt-every 0)"))
              << "\n";
  return true;
}

}  // namespace gaugelab::gpt2
