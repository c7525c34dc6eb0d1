// The loop's evaluation station: the mean validation loss over the run's fixed batches, shared over the
// data-parallel ranks when they divide evenly, interruptible by SIGTERM/SIGINT between batches; then a sample: a
// greedy continuation of a fixed prompt appended to OUT/samples.txt.
#include "gpt2/train/evaluate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>

#include "io/atomic_file.hpp"
#include "io/stop_signal.hpp"

namespace gaugelab::gpt2 {

double evaluate(TrainRun& r) {
  at::NoGradGuard no_grad;
  r.model->train(false);
  const std::int64_t n = r.val->count(), world = r.dist.world;
  const bool shared = r.dist.active() && n % world == 0;  // each rank a share, then the mean of means
  const bool rank0 = r.dist.rank == 0;
  double sum = 0;
  std::int64_t count = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto shown = t0;
  for (std::int64_t i = shared ? r.dist.rank : 0; i < n; i += shared ? world : 1) {
    if (io::stop_requested() != 0) {  // SIGTERM/SIGINT: the step's checkpoint comes next, not more batches
      if (rank0)
        std::cerr << "train: " << io::stop_signal_name(io::stop_requested()) << " during the evaluation: stopped after "
                  << count << " of " << n << " batches (no validation loss this step; a resume evaluates it)\n";
      count = 0;
      break;
    }
    const at::Tensor batch = r.val->batch(i).to(r.device);  // [B, T+1], B = --batch-size
    const std::int64_t T = batch.size(1) - 1, B = batch.size(0);
    AutocastScope autocast(r.device, r.precision);
    // In pieces of at most the training micro-batch (smaller when --fit-micro-batch found --batch-size too large):
    // the batch's mean loss as the size-weighted mean of the pieces' means.
    const std::int64_t piece = r.micro_batch > 0 ? std::min(B, r.micro_batch) : B;
    if (piece == B) {
      sum += r.model->loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T)).item<double>();
    } else {
      double weighted = 0;
      for (std::int64_t s0 = 0; s0 < B; s0 += piece) {
        const at::Tensor part = batch.narrow(0, s0, std::min(piece, B - s0));  // [b, T+1]
        weighted += r.model->loss(part.narrow(1, 0, T), part.narrow(1, 1, T)).item<double>() *
                    static_cast<double>(part.size(0));
      }
      sum += weighted / static_cast<double>(B);
    }
    ++count;
    const auto now = std::chrono::steady_clock::now();
    if (rank0 && now - shown > std::chrono::seconds(10)) {  // a long evaluation says where it is
      shown = now;
      std::cerr << "train: evaluating: batch " << i + 1 << " of " << n << ", "
                << std::lround(std::chrono::duration<double>(now - t0).count()) << " s\n";
    }
  }
  r.model->train(true);
  const double mean = count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
  return shared ? r.dist.all_reduce_mean(mean) : mean;
}

void record_val_loss(TrainState& st, double val_loss) {
  st.final_val_loss = val_loss;
  if (std::isfinite(val_loss) && !(st.best_val_loss <= val_loss)) st.best_val_loss = val_loss;
}

namespace {

// The greedy sample of `step` (rank 0, when sampling): appended and printed when whole; false when a stop cut
// it short (nothing written: a resume writes it).
bool sample(TrainRun& run, const LoopState& loop, std::int64_t step) {
  const TrainOptions& o = run.options;
  if (loop.sample_prompt.empty()) return true;
  const std::vector<std::int64_t> more = greedy_continue(*run.model, loop.sample_prompt, o.sample_tokens);
  if (io::stop_requested() != 0 && static_cast<std::int64_t>(more.size()) < o.sample_tokens) {
    std::cerr << "train: " << io::stop_signal_name(io::stop_requested()) << " during the sample of step " << step
              << ": left out (a resume writes it)\n";
    return false;
  }
  const std::string line =
      sample_line(step, loop.sample_prompt, more, run.vocab_map.ids, loop.sample_tok ? &*loop.sample_tok : nullptr);
  append_sample_line(train_samples_path(o.run.out), line);
  std::cout << "sample " << line << "\n";
  return true;
}

}  // namespace

void evaluate_and_sample(TrainRun& run, const LoopState& loop, StepWork& s) {
  const TrainOptions& o = run.options;
  TrainState& st = run.state;
  st.eval_pending = false;
  if (!(s.row.step % o.eval_every == 0 || s.last)) return;
  s.row.val_loss = evaluate(run);
  const bool evaluated = io::stop_requested() == 0 || std::isfinite(s.row.val_loss);
  const bool sampled = evaluated && sample(run, loop, s.row.step);  // no sample of an unfinished evaluation
  st.eval_pending = !(evaluated && sampled);
  record_val_loss(st, s.row.val_loss);
}

void catch_up_sample(TrainRun& run, const LoopState& loop) {
  if (!run.state.eval_pending) return;
  sample(run, loop, run.state.step);
  run.state.eval_pending = false;
}

// ---- Text samples ----

std::string train_samples_path(const std::string& out) { return (std::filesystem::path(out) / "samples.txt").string(); }

void keep_samples_up_to(const std::string& path, std::int64_t step) {
  std::vector<std::string> kept;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      long long s = 0;
      if (std::sscanf(line.c_str(), "step %lld:", &s) == 1 && s <= step) kept.push_back(line);
    }
  }
  if (kept.empty() && !std::filesystem::exists(path)) return;
  std::string text;
  for (const std::string& l : kept) text += l + "\n";
  // Through a temporary file: a full disk leaves the old samples, not an empty file.
  io::write_atomically(path, text.data(), text.size(), path);
}

void append_sample_line(const std::string& path, const std::string& line) {
  io::append_text(path, line + "\n", path);
}

std::vector<std::int64_t> greedy_continue(GPT& model, const std::vector<std::int64_t>& prompt, std::int64_t tokens) {
  at::NoGradGuard no_grad;
  const bool was_training = model.training();
  model.train(false);
  std::vector<std::int64_t> ctx = prompt, out;
  const auto block = static_cast<std::size_t>(model.config().block_size);
  // A stop (SIGTERM/SIGINT during training) ends the sample where it is: the step's checkpoint comes next.
  for (std::int64_t i = 0; i < tokens && !ctx.empty() && io::stop_requested() == 0; ++i) {
    const std::size_t start = ctx.size() > block ? ctx.size() - block : 0;
    std::vector<std::int64_t> window(ctx.begin() + static_cast<std::ptrdiff_t>(start), ctx.end());
    const at::Tensor idx =
        at::from_blob(window.data(), {1, static_cast<std::int64_t>(window.size())}, at::kLong).clone().to(model.device());
    const at::Tensor logits = model.logits(idx);  // [1, T, V]
    const std::int64_t next = logits[0][static_cast<std::int64_t>(window.size()) - 1].argmax().item<std::int64_t>();
    ctx.push_back(next);
    out.push_back(next);
  }
  model.train(was_training);
  return out;
}

std::string sample_line(std::int64_t step, const std::vector<std::int64_t>& prompt,
                        const std::vector<std::int64_t>& continuation, const std::vector<std::int32_t>& vocab_ids,
                        const data::Gpt2Tokenizer* tok) {
  auto text = [&](const std::vector<std::int64_t>& ids) {
    std::vector<data::TokenId> g;
    for (const std::int64_t id : ids)
      g.push_back(static_cast<data::TokenId>(vocab_ids.empty() ? id : vocab_ids[static_cast<std::size_t>(id)]));
    std::string s;
    if (tok != nullptr) {
      s = tok->decode(g);
    } else {
      for (const data::TokenId id : g) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
      }
      s = "[" + s + "]";
    }
    std::string esc;
    for (const char c : s) esc += c == '\n' ? std::string("\\n") : std::string(1, c);
    return esc;
  };
  return "step " + std::to_string(step) + ": " + text(prompt) + "|" + text(continuation);
}

}  // namespace gaugelab::gpt2
