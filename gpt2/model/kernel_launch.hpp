// Where a kernel of ours (model/cuda/) launches: the device guard and the stream of its operand's device. CUDA's
// current stream for a CUDA tensor; nothing for a CPU tensor (a host implementation of a kernel's contract, as the
// plumbing tests use). Only for the files that call the kernels: the CUDA headers come with it.
#pragma once

#include <optional>
#include <utility>

#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

namespace gaugelab::gpt2 {

inline std::optional<c10::cuda::CUDAGuard> launch_guard(const at::Tensor& t) {
  if (!t.is_cuda()) return std::nullopt;
  return std::optional<c10::cuda::CUDAGuard>(std::in_place, t.device());
}

/// A cudaStream_t as void* (the kernels' signatures), or null off CUDA.
inline void* launch_stream(const at::Tensor& t) {
  return t.is_cuda() ? at::cuda::getCurrentCUDAStream().stream() : nullptr;
}

}  // namespace gaugelab::gpt2
