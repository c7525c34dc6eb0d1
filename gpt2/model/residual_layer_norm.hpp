// The pre-LN residual stream's step "add the pending branch, then LayerNorm":
//   sum = x + branch,   y = (sum − μ)/√(σ² + ε)·γ + β   over the last dimension.
// GPT-2 does this 2·n_layer + 1 times per forward (ln_1 after each MLP branch, ln_2 after each attention branch,
// ln_f after the last block). ATen's add and layer_norm are the reference and the path on the CPU, in float32
// and with KernelPath::aten. On CUDA under bf16 autocast (KernelPath::fused, the default, where built) one kernel
// each way does it (model/cuda/residual_layer_norm_kernel.hpp): y comes out in bf16, which the next matmul
// would cast it to anyway, and the backward gives the branch its gradient in bf16 beside the stream's float32 one,
// where ATen takes eight kernels and three casts (GPT-2 124M on an H200: ~6.9 ms of a 27.5 ms step in LayerNorm,
// adds and casts, against ~3 ms in torch.compile's fused kernels).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "gpt2/model/kernel_path.hpp"

namespace gaugelab::gpt2 {

struct AddNorm {
  at::Tensor sum;  // [..., d] x + branch, float32 (x itself without a branch): the stream from here on
  at::Tensor y;    // [..., d] the LayerNorm of sum: float32 on the ATen path, bf16 on the fused one
};

/// x [..., d] the residual stream (float32); branch [..., d] what the last block added to it, or undefined;
/// gamma [d]; beta [d] or undefined (no bias). Differentiable in x, branch, gamma and beta.
AddNorm add_layer_norm(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma, const at::Tensor& beta,
                       double eps, KernelPath path);

/// The kernels' contract (model/cuda/residual_layer_norm_kernel.hpp) as function pointers: the CUDA kernels where
/// built, or a host implementation of the same contract, which lets a test run the autograd plumbing around the
/// kernels on the CPU.
struct AddLayerNormKernels {
  int (*forward)(const float* x, const void* branch_bf16, const float* gamma, const float* beta, float* sum,
                 void* y_bf16, float* mean, float* rstd, std::int64_t rows, std::int64_t cols, float eps, void* stream);
  std::int64_t (*scratch_floats)(std::int64_t rows, std::int64_t cols);
  int (*backward)(const float* s, const float* mean, const float* rstd, const void* dy_bf16, const float* ds,
                  const float* gamma, float* dx, void* dx_bf16, float* dgamma, float* dbeta, float* scratch,
                  std::int64_t rows, std::int64_t cols, void* stream);
};

/// The fused path with `kernels` (operands as add_layer_norm's, float32 x and γ/β, bf16 branch; on the device
/// the kernels address: CUDA for the CUDA kernels). y comes out bf16. `kernels` must outlive the backward.
AddNorm add_layer_norm_with(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma,
                            const at::Tensor& beta, double eps, const AddLayerNormKernels& kernels);

/// Whether add_layer_norm takes the fused kernel for these operands (fused_kernel_runs, then its own conditions:
/// float32 stream and γ/β, a bf16 branch, rows no wider than the kernel takes).
bool add_layer_norm_fused(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma,
                          const at::Tensor& beta, KernelPath path);

}  // namespace gaugelab::gpt2
