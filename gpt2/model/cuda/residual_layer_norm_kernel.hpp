// The pre-LN residual stream's "add the branch, then LayerNorm" in one CUDA kernel each way
// (residual_layer_norm_kernel.cu), for bf16 autocast: what residual_layer_norm.cpp otherwise does in ATen as
// a mixed-dtype add, a float32 LayerNorm, a cast of its output to bf16 for the next matmul, and in the
// backward the cast of the incoming bf16 gradient to float32, LayerNorm's two backward kernels
// (ATen's GammaBetaBackward alone was 1.5 ms of a 27.5 ms GPT-2 124M step on an H200), the sum of the two
// residual gradients and the cast of that sum to bf16 for the branch. As llm.c's fused_residual_forward and
// layernorm_backward, but deterministic: dγ and dβ are reduced through a fixed partition and a fixed order
// (no atomics), so a resumed run on the same card repeats bit for bit.
// No LibTorch header: plain pointers and the caller's stream, so nvcc compiles it alone. Built only where
// CMake finds a CUDA compiler (GAUGELAB_HAVE_CUDA_KERNELS); the ATen ops are the reference (tests/parity).
#pragma once

#include <cstdint>

namespace gaugelab::gpt2::cuda {

/// The widest row the backward takes (one warp's dγ/dβ partials in 48 KB of shared memory); wider rows
/// stay on the ATen path.
constexpr std::int64_t kResidualLayerNormMaxCols = 6144;

/// Forward over rows × cols (row-major, contiguous):
///   s = x + branch      float32 [rows, cols], written to `sum`; branch bf16, or null (then s = x, `sum` unused)
///   y = (s − μ)·rstd·γ + β   rounded to bf16 [rows, cols]; β may be null (no bias)
///   mean, rstd          float32 [rows] (rstd = 1/√(var + eps), var the biased variance), for the backward.
/// Returns 0, or the CUDA error code of the launch.
int residual_layer_norm_forward(const float* x, const void* branch_bf16, const float* gamma, const float* beta,
                                float* sum, void* y_bf16, float* mean, float* rstd, std::int64_t rows,
                                std::int64_t cols, float eps, void* stream);

/// Floats of scratch the backward needs for rows × cols (the per-block partial sums of dγ and dβ).
std::int64_t residual_layer_norm_scratch_floats(std::int64_t rows, std::int64_t cols);

/// Backward: s the forward's sum (or x), mean/rstd from the forward, dy bf16 [rows, cols] the gradient of y,
/// ds float32 [rows, cols] the gradient of the sum from the stream's later uses (or null: none).
///   dx = ds + (dŷ − mean(dŷ) − ŷ·mean(dŷ·ŷ))·rstd with dŷ = dy·γ, ŷ = (s − μ)·rstd   float32 [rows, cols]
///   dx_bf16 = dx rounded to bf16 (the branch's gradient), unless null
///   dgamma = Σ_rows dy·ŷ, dbeta = Σ_rows dy (unless null)   float32 [cols], overwritten
/// scratch: residual_layer_norm_scratch_floats(rows, cols) floats. Returns 0, or the CUDA error code.
int residual_layer_norm_backward(const float* s, const float* mean, const float* rstd, const void* dy_bf16,
                                 const float* ds, const float* gamma, float* dx, void* dx_bf16, float* dgamma,
                                 float* dbeta, float* scratch, std::int64_t rows, std::int64_t cols, void* stream);

}  // namespace gaugelab::gpt2::cuda
