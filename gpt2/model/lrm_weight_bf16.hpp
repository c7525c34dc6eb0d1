// The multipliers' effective weight W_eff = diag(r)·W̄·diag(c_g) for the forward's matmul under bf16 autocast
// on CUDA: one kernel writes it in bf16 and one (plus a fixed-order reduction) gives dW̄, dr and dc from
// dW_eff (model/cuda/lrm_weight_kernel.hpp). ops/lrm_weight.hpp's ATen ops are the reference, and the path
// everywhere else: on the CPU, in float32, with KernelPath::aten, and wherever W_eff itself is wanted (merging
// the multipliers, the gauge analysis): this one exists only for the matmul, in its dtype.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "gpt2/model/kernel_path.hpp"

namespace gaugelab::gpt2 {

/// The kernels' contract (model/cuda/lrm_weight_kernel.hpp) as function pointers: the CUDA kernels where built,
/// or a host implementation of the same contract, which lets a test run the autograd plumbing on the CPU.
struct LrmWeightKernels {
  int (*forward)(const float* w, const float* r, const float* c, void* w_eff_bf16, std::int64_t out, std::int64_t in,
                 std::int64_t groups, void* stream);
  std::int64_t (*scratch_floats)(std::int64_t out, std::int64_t in, std::int64_t groups);
  int (*backward)(const void* g_bf16, const float* w, const float* r, const float* c, float* dw, float* dr, float* dc,
                  float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups, void* stream);
};

/// W_eff in bf16 through `kernels` (float32 w, r, c on the device the kernels address). `kernels` must outlive the
/// backward.
at::Tensor lrm_effective_weight_with(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c,
                                     const LrmWeightKernels& kernels);

/// Whether lrm_effective_weight_bf16 takes the kernels for these operands: fused_kernel_runs, then float32
/// contiguous-able W̄ [out, in], r [out] or undefined, c [in] or [G, in] or undefined (not both undefined).
bool lrm_weight_fused(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c, KernelPath path);

/// W_eff [out, in] in bf16, differentiable in w, r and c; shapes as lrm_effective_weight (ops/lrm_weight.hpp).
/// Only where lrm_weight_fused says so.
at::Tensor lrm_effective_weight_bf16(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c);

}  // namespace gaugelab::gpt2
