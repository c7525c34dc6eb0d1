// The MFU denominator when --peak-tflops is 0: the best of a few square matmuls in the run's compute
// dtype on its device, measured at start (~0.3 s). And --bf16-mode auto's two candidates at the model's shape, and
// the path it takes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>

#include "gpt2/model/bf16_round.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/train/matmul_peak.hpp"

namespace gaugelab::gpt2 {

double measure_matmul_tflops(c10::Device device, Precision precision) {
  at::NoGradGuard no_grad;
  const std::int64_t n = device.is_cuda() ? 4096 : 512;
  const auto dtype = precision == Precision::bf16 ? at::kBFloat16 : at::kFloat;
  const at::Tensor a = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  const at::Tensor b = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  at::mm(a, b).sum().item<double>();  // warm-up (and CUDA sync)
  double best = 0;
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  for (int rep = 0; rep < 50 && std::chrono::steady_clock::now() < t_end; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    at::Tensor c;
    for (int i = 0; i < 4; ++i) c = at::mm(a, b);
    c.sum().item<double>();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 4.0 * 2.0 * static_cast<double>(n * n * n) / s / 1e12);
  }
  return best;
}

namespace {

// Best wall time of f() (which returns a result to read back, so CUDA's asynchronous work is counted), after one
// warm-up call, within `budget_s`.
double best_time(const std::function<at::Tensor()>& f, double budget_s) {
  f().sum().item<double>();
  double best = std::numeric_limits<double>::infinity();
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::duration<double>(budget_s);
  for (int rep = 0; rep < 20 && (rep < 2 || std::chrono::steady_clock::now() < t_end); ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f().sum().item<double>();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

std::string ms(double seconds) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g ms", seconds * 1e3);
  return b;
}

}  // namespace

Bf16PathTiming time_bf16_paths(c10::Device device, std::int64_t rows, std::int64_t in, std::int64_t out) {
  at::NoGradGuard no_grad;
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const at::Tensor x = at::randn({rows, in}, f32), w = at::randn({out, in}, f32);  // [rows, in], [out, in]
  Bf16PathTiming t;
  // Each as the step computes it: autocast casts the float32 operands, the emulation rounds them. The sum read back
  // is part of both; it is small beside the product at the shapes timed here.
  t.native_s = best_time([&] { return at::linear(x.to(at::kBFloat16), w.to(at::kBFloat16)); }, 0.1);
  t.emulated_s = best_time([&] { return round_to_bf16(at::linear(round_to_bf16(x), round_to_bf16(w))); }, 0.1);
  return t;
}

Bf16Path choose_bf16_path(Bf16Mode mode, const ModelConfig& mc, std::int64_t batch_size, c10::Device device,
                          const std::function<double(double)>& mean_over_ranks) {
  if (mode == Bf16Mode::automatic && device.is_cuda()) return {Bf16Mode::native, "auto: native on CUDA"};
  if (mode != Bf16Mode::automatic) return {mode, "as given"};
  const std::int64_t rows = std::min<std::int64_t>(batch_size * mc.block_size, LmHeadWorkspace{}.chunk_rows);
  const std::int64_t cols = std::max(4 * mc.n_embd, mc.padded_vocab());
  Bf16PathTiming t = time_bf16_paths(device, rows, mc.n_embd, cols);
  if (mean_over_ranks) {
    t.native_s = mean_over_ranks(t.native_s);
    t.emulated_s = mean_over_ranks(t.emulated_s);
  }
  return {t.emulated_s < t.native_s ? Bf16Mode::emulated : Bf16Mode::native,
          "auto: x·Wᵀ [" + std::to_string(rows) + " x " + std::to_string(mc.n_embd) + "]·[" + std::to_string(mc.n_embd) +
              " x " + std::to_string(cols) + "] in " + ms(t.native_s) + " native, " + ms(t.emulated_s) + " emulated"};
}

}  // namespace gaugelab::gpt2
