// Our CUDA ops, one row each: the trainer's flag that picks it (a KernelPath, ../choices.hpp: fused runs the
// kernel, aten its reference), the kernel's entry points (NAME_kernel.hpp here), the wrapper that calls them under
// autograd (an ATen-level function of gpt2/model/), the ATen ops it replaces (the reference, and the path everywhere
// else: kernel_path.hpp), the parity table's rows for it (tests/parity: the rows whose op is the wrapper) and the
// kernel check's cases for it (tests/cuda: the cases of that kernel name). tests/parity and the kernel check
// refuse a row without its parity rows or without its cases.
// No LibTorch or CUDA header: the kernel check (plain C++ and nvcc) reads it too.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gaugelab::gpt2::cuda {

struct CudaOp {
  const char* name;       // the kernel's file stem here: NAME_kernel.hpp, NAME_kernel.cu
  const char* flag;       // the option that picks the kernel or the reference
  const char* kernel;     // the kernel's entry points (NAME_kernel.hpp)
  const char* wrapper;    // the gpt2:: function that runs it under autograd; the parity rows' op starts with it
  const char* reference;  // the ATen ops it replaces
  const char* check;      // the kernel check's case name
};

inline constexpr CudaOp kCudaOps[] = {
    {"lm_head_ce", "--lm-head-kernel", "lm_head_ce_rows_bf16", "gpt2::lm_head_loss",
     "ATen's chunked passes: linear, log-softmax, the gradient's softmax and two matmuls (model/lm_head_loss.cpp)",
     "lm_head_ce"},
    {"residual_layer_norm", "--ln-kernel", "residual_layer_norm_forward, residual_layer_norm_backward",
     "gpt2::add_layer_norm", "ATen's add, layer_norm and casts to and from bf16 (model/residual_layer_norm.cpp)",
     "ln_fwd_bwd"},
    {"lrm_weight", "--lrm-kernel", "lrm_weight_forward, lrm_weight_backward", "gpt2::lrm_effective_weight_bf16",
     "ATen's products diag(r)·W̄·diag(c) and the cast to bf16 (ops/lrm_weight.hpp)", "lrm_weight_fwd_bwd"},
};
inline constexpr std::size_t kCudaOpCount = sizeof(kCudaOps) / sizeof(kCudaOps[0]);

/// The row whose kernel file stem is `name`; throws std::logic_error when the table has none.
inline const CudaOp& cuda_op(std::string_view name) {
  for (const CudaOp& op : kCudaOps)
    if (name == op.name) return op;
  throw std::logic_error("ops_table.hpp has no CUDA op '" + std::string(name) + "'");
}

/// The option name of `op`'s flag, without its leading "--" ("ln-kernel").
inline std::string flag_option(const CudaOp& op) { return std::string(op.flag).substr(2); }

/// Whether `op` (a parity row's op text) names `wrapper`: it starts with it, and the name ends there.
inline bool names_wrapper(std::string_view op, std::string_view wrapper) {
  if (op.substr(0, wrapper.size()) != wrapper) return false;
  if (op.size() == wrapper.size()) return true;
  const char next = op[wrapper.size()];
  return !(next == '_' || (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9'));
}

}  // namespace gaugelab::gpt2::cuda
