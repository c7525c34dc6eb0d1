// The MFU denominator when --peak-tflops is 0 (matmul_peak.cpp).
#pragma once

#include <c10/core/Device.h>

#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

/// Matmul throughput (TFLOP/s) of `device` in the run's compute dtype, measured over ~0.3 s.
double measure_matmul_tflops(c10::Device device, Precision precision);

}  // namespace gaugelab::gpt2
