// bench/gpt2_train: one training step of the tiny CPU config (gpt2/configs/tiny-cpu.ini: 2 layers,
// 4 heads, d 64, context 64, 8 sequences, compact vocabulary of 401 ids) as `gaugelab train` runs it
// (forward + backward + clip + fused AdamW over the parameter groups), and what the trainer adds to it:
//   * tokens/s and achieved GFLOP/s (6N + 12·L·d·T per token) against a matmul peak measured now;
//   * GaugeFix every step (target <= 1 % of a step), the per-head scale + drift sample (one host
//     sync), and building a batch from the memory-mapped token file (target: invisible).
// Medians over repetitions; the load average is printed before and after (the machine is shared:
// numbers taken under load are not comparable).
//   build/bench/gpt2_train [--threads 1 --steps 30 --precision fp32]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>

#include "data/token_files.hpp"
#include "gpt2/train/data_loader.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/train/optimizer.hpp"
#include "gpt2/train/matmul_peak.hpp"
#include "io/choice_option.hpp"
#include "io/options.hpp"

using namespace gaugelab;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchOptions {
  int threads = 1;                  // LibTorch/OpenMP threads (1: the tiny config's setting)
  std::int64_t steps = 30;          // timed training steps (after 3 warm-up steps)
  gpt2::Precision precision = gpt2::Precision::fp32;  // fp32 or bf16 autocast
  std::int64_t repeats = 200;       // repetitions of each small operation (GaugeFix, drift, batch)
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

template <class F>
double median_time(std::int64_t n, F&& f) {
  std::vector<double> t;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  return median(t);
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  io::Options opts("bench gpt2_train", "Training step of the tiny config and the trainer's overheads.");
  opts.add("threads", &o.threads, "threads", io::Range::at_least(1))
      .add("steps", &o.steps, "timed steps", io::Range::at_least(3));
  io::add_choice(opts, "precision", &o.precision, "fp32 or bf16", gpt2::precision_choices())
      .add("repeats", &o.repeats, "repetitions of each small operation", io::Range::at_least(10));
  if (!opts.parse(std::vector<std::string>(argv + 1, argv + argc))) return 0;
  const int threads = gpt2::apply_torch_threads(o.threads);
  const gpt2::Precision prec = o.precision;
  const c10::Device cpu(c10::kCPU);
  std::printf("gpt2_train: tiny config, %d threads, %s; load average before: %s\n", threads, gpt2::precision_name(prec),
              loadavg().c_str());

  // The tiny config's model, optimizer groups (condition B: Q/K multipliers undecayed) and data.
  gpt2::ModelConfig mc = gpt2::ModelConfig::preset("nano");
  mc.n_layer = 2, mc.n_head = 4, mc.n_embd = 64, mc.block_size = 64, mc.vocab_size = 401;
  gpt2::GPT model(mc, 42);
  gpt2::OptimizerSettings os;
  os.wd_multipliers_qk = 0;
  gpt2::TrainOptimizer opt(model, os);
  const std::int64_t B = 8, T = mc.block_size;
  const std::string dir = (std::filesystem::temp_directory_path() / ("gaugelab_bench_train_" + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);
  std::vector<data::TokenId> toks(200000);
  for (std::size_t i = 0; i < toks.size(); ++i) toks[i] = static_cast<data::TokenId>((i * 2654435761u >> 7) % 401);
  data::write_token_file(dir + "/train.bin", toks, data::TokenFileFormat::nanogpt);
  const gpt2::TrainBatches batches({dir + "/train.bin"}, 42, B, T, 1, 0, 1, mc.vocab_size);

  std::int64_t it = 0;
  auto step = [&] {
    opt.zero_grad();
    const at::Tensor b = batches.batch(it++, 0);
    at::Tensor loss;
    {
      gpt2::AutocastScope ac(cpu, prec);
      loss = model.loss(b.narrow(1, 0, T), b.narrow(1, 1, T));
    }
    loss.backward();
    loss.item<double>();
    opt.clip_grad_norm(1.0);
    opt.step(3e-3);
  };
  for (int i = 0; i < 3; ++i) step();
  const double t_step = median_time(o.steps, step);
  const double t_fix = median_time(o.repeats, [&] { gpt2::gauge_fix(model, 1e-12); });
  const double t_drift = median_time(o.repeats, [&] { gpt2::qk_drift(gpt2::qk_head_scales(model)); });
  const double t_batch = median_time(o.repeats, [&] { batches.batch(it++, 0); });
  const double peak = gpt2::measure_matmul_tflops(cpu, prec) * 1e3;  // GFLOP/s
  std::filesystem::remove_all(dir);

  const double tokens = static_cast<double>(B * T);
  const double flops_per_token = 6.0 * static_cast<double>(model.num_parameters()) +
                                 12.0 * static_cast<double>(mc.n_layer * mc.n_embd * T);
  const double gflops = flops_per_token * tokens / t_step / 1e9;
  std::printf("%-34s %12s %12s\n", "measure", "value", "ratio");
  std::printf("%-34s %9.2f ms %12s\n", "training step (512 tokens)", t_step * 1e3, "");
  std::printf("%-34s %12.0f %12s\n", "tokens/s", tokens / t_step, "");
  std::printf("%-34s %12.2f %11.1f%% of matmul peak %.1f GFLOP/s\n", "achieved GFLOP/s", gflops, 100 * gflops / peak,
              peak);
  std::printf("%-34s %9.1f us %11.2f%% of a step (target <= 1%%)\n", "GaugeFix (every layer and head)", t_fix * 1e6,
              100 * t_fix / t_step);
  std::printf("%-34s %9.1f us %11.2f%% of a step (when sampled)\n", "scales + drift sample", t_drift * 1e6,
              100 * t_drift / t_step);
  std::printf("%-34s %9.1f us %11.2f%% of a step\n", "batch from the token file", t_batch * 1e6, 100 * t_batch / t_step);
  std::printf("load average after: %s\n", loadavg().c_str());
  return 0;
}
