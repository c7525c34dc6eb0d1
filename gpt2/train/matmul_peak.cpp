// The MFU denominator when --peak-tflops is 0: the best of a few square matmuls in the run's compute
// dtype on its device, measured at start (~0.3 s).
#include <algorithm>
#include <chrono>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>

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

}  // namespace gaugelab::gpt2
