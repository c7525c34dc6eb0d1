// Where a kernel of ours (model/cuda/) launches: the device guard and the stream of its operand's device (CUDA's
// current stream for a CUDA tensor; nothing for a CPU tensor: a host implementation of a kernel's contract, as the
// plumbing tests use), and what a failed launch throws. CUDA's own calls go through the CUDA half (cuda_side.hpp);
// the device guard is c10's generic one (the CUDA half registers CUDA's).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>

#include "gpt2/model/cuda_side.hpp"

namespace gaugelab::gpt2 {

using LaunchGuard = std::optional<c10::DeviceGuard>;

inline LaunchGuard launch_guard(const at::Tensor& t) {
  if (!t.is_cuda()) return std::nullopt;
  (void)cuda_side();  // CUDA's device guard comes with the CUDA half
  return LaunchGuard(std::in_place, t.device());
}

/// A cudaStream_t as void* (the kernels' signatures), or null off CUDA.
inline void* launch_stream(const at::Tensor& t) {
  return t.is_cuda() ? cuda_side().current_stream(t.device().index()) : nullptr;
}

/// A kernel's sizes, by name, for the message of a failed launch: {{"rows", 12288}, {"cols", 768}}.
using LaunchShape = std::initializer_list<std::pair<const char*, std::int64_t>>;

/// A kernel's return code (0, or the CUDA error of its launch) turned into one exception (one line) naming the
/// kernel (`what`), its shape and the error by CUDA's name and description, e.g.
///   "add_layer_norm: the fused forward kernel (residual_layer_norm_forward) [rows 12288, cols 768] failed:
///    cudaErrorInvalidConfiguration (invalid configuration argument)".
/// The message is built only on failure.
inline void check_launch(int rc, const char* what, LaunchShape shape) {
  if (rc == 0) return;
  std::string m = std::string(what) + " [";
  bool first = true;
  for (const auto& [name, size] : shape) {
    m += (first ? "" : ", ") + std::string(name) + " " + std::to_string(size);
    first = false;
  }
  throw std::runtime_error(m + "] failed: " + cuda_side().error_text(rc));
}

}  // namespace gaugelab::gpt2
