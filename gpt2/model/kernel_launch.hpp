// Where a kernel of ours (model/cuda/) launches: the device guard and the stream of its operand's device (CUDA's
// current stream for a CUDA tensor; nothing for a CPU tensor: a host implementation of a kernel's contract, as the
// plumbing tests use), and what a failed launch throws. Only for the files that call the kernels: the CUDA headers
// come with it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
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

/// A kernel's return code (0, or the CUDA error of its launch) turned into one exception naming `what`.
inline void check_launch(int rc, const std::string& what) {
  if (rc != 0) throw std::runtime_error(what + " failed (CUDA error " + std::to_string(rc) + ")");
}

}  // namespace gaugelab::gpt2
