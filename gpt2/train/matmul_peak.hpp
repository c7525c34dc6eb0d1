// Matmuls timed at start (matmul_peak.cpp): the MFU denominator when --peak-tflops is 0, and the faster bf16
// path for --bf16-mode auto (choose_bf16_path).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <c10/core/Device.h>

#include "gpt2/model/choices.hpp"
#include "gpt2/model/config.hpp"
#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

/// Matmul throughput (TFLOP/s) of `device` in the run's compute dtype, measured over ~0.3 s.
double measure_matmul_tflops(c10::Device device, Precision precision);

/// Seconds of one x·Wᵀ, x [rows, in], W [out, in], on `device` in each bf16 path, best of a few (~0.2 s in all):
/// native (bf16 operands and output) and emulated (float32 with both operands and the output rounded to bf16).
struct Bf16PathTiming {
  double native_s = 0;
  double emulated_s = 0;
};
Bf16PathTiming time_bf16_paths(c10::Device device, std::int64_t rows, std::int64_t in, std::int64_t out);

/// The path a --precision bf16 run takes (runtime.hpp) and why.
struct Bf16Path {
  Bf16Mode mode = Bf16Mode::native;  // native or emulated
  std::string why;                   // "as given", "auto: native on CUDA", or the timings auto compared
};
/// --bf16-mode as given; auto is native on CUDA and, on the CPU, the faster of the two (time_bf16_paths) at the
/// model's largest matmul: [B·T, d] times the LM head's (or c_fc's) [cols, d], B = `batch_size`. Data-parallel ranks
/// pass `mean_over_ranks` (empty on one process) and decide on their mean timings, so all take one path.
Bf16Path choose_bf16_path(Bf16Mode mode, const ModelConfig& mc, std::int64_t batch_size, c10::Device device,
                          const std::function<double(double)>& mean_over_ranks);

}  // namespace gaugelab::gpt2
