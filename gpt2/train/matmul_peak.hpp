// Matmuls timed at start (matmul_peak.cpp): the MFU denominator when --peak-tflops is 0, and the faster bf16
// path for --bf16-mode auto.
#pragma once

#include <c10/core/Device.h>

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

}  // namespace gaugelab::gpt2
