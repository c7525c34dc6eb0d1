// Where our own CUDA kernels (model/cuda/) replace a sequence of ATen ops: each such piece has its flag
// (--lm-head-kernel, --ln-kernel, --lrm-kernel: a KernelPath, choices.hpp) and runs where the one rule below
// says so, for the model and for the settings line alike. The ATen ops stay the reference (tests/parity) and
// the path everywhere else.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "gpt2/model/choices.hpp"

namespace gaugelab::gpt2 {

/// Whether this build has the kernels (CMake found a CUDA compiler: GAUGELAB_HAVE_CUDA_KERNELS).
bool cuda_kernels_built();
/// Whether the fused kernel runs for a computation on `device` whose matmuls run in `compute` (autocast's
/// dtype): chosen, built, on CUDA, in bf16. Every piece asks this and adds its own shape conditions.
bool fused_kernel_runs(KernelPath k, c10::Device device, c10::ScalarType compute);

}  // namespace gaugelab::gpt2
