// Where our own CUDA kernels (model/cuda/) replace a sequence of ATen ops: each such piece has its flag
// (--lm-head-kernel, --ln-kernel: fused|aten) and runs where the one rule below says so, for the model and
// for the settings line alike. The ATen ops stay the reference (tests/parity) and the path everywhere else.
#pragma once

#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace gaugelab::gpt2 {

/// One fused kernel, or the ATen ops it replaces.
enum class KernelPath { fused, aten };

/// Whether this build has the kernels (CMake found a CUDA compiler: GAUGELAB_HAVE_CUDA_KERNELS).
bool cuda_kernels_built();
/// "fused" / "aten" (the flags' words); throws std::invalid_argument naming `what` on any other word.
KernelPath parse_kernel_path(const std::string& word, const std::string& what);
/// Whether the fused kernel runs for a computation on `device` whose matmuls run in `compute` (autocast's
/// dtype): chosen, built, on CUDA, in bf16. Every piece asks this and adds its own shape conditions.
bool fused_kernel_runs(KernelPath k, c10::Device device, c10::ScalarType compute);

}  // namespace gaugelab::gpt2
