// The learnable multipliers folded into the weight by one CUDA kernel each way (lrm_weight_kernel.cu), under
// bf16 autocast: W_eff = diag(r)·W̄·diag(c_g) written straight in bf16 for the matmul, where ATen takes two
// float32 passes and autocast's cast (three over every matrix, forward), and in the backward the cast of dW_eff
// to float32, two products and two reductions. GPT-2 124M with multipliers on an H200 ran 17 % slower than
// without, its step launch-bound on those small passes. The reductions (dr over columns, dc over each group's
// rows) go through a fixed partition and a fixed order (no atomics): a resumed run repeats bit for bit.
// No LibTorch header: plain pointers and the caller's stream. Built only where CMake finds a CUDA compiler
// (GAUGELAB_HAVE_CUDA_KERNELS); ops/lrm_weight.cpp's ATen ops are the reference (tests/parity).
#pragma once

#include <cstdint>

namespace gaugelab::gpt2::cuda {

/// The widest row (in) the backward takes: the block's dc partials in the 48 KB of shared memory a launch gets
/// without opting in, beside the 32 bytes of its row reduction.
constexpr std::int64_t kLrmWeightMaxIn = 12280;

/// W_eff[i, j] = bf16((W[i, j]·r[i])·c[g(i), j]), g(i) = i / (out / groups), over W [out, in] float32
/// row-major; r [out] or null (1); c [groups, in] or null (1). Returns 0, or the CUDA error code.
int lrm_weight_forward(const float* w, const float* r, const float* c, void* w_eff_bf16, std::int64_t out,
                       std::int64_t in, std::int64_t groups, void* stream);

/// Floats of scratch the backward needs (the per-chunk partial sums of dc).
std::int64_t lrm_weight_scratch_floats(std::int64_t out, std::int64_t in, std::int64_t groups);

/// Backward, for G = dL/dW_eff [out, in] bf16:
///   dW[i, j] = (G[i, j]·c[g(i), j])·r[i]                       float32 [out, in]
///   dr[i]    = Σ_j (G[i, j]·c[g(i), j])·W[i, j]                float32 [out], if r (and dr) given
///   dc[g, j] = Σ_{i in group g} G[i, j]·(W[i, j]·r[i])          float32 [groups, in], if c (and dc) given
/// scratch: lrm_weight_scratch_floats(out, in, groups) floats. Returns 0, or the CUDA error code.
int lrm_weight_backward(const void* g_bf16, const float* w, const float* r, const float* c, float* dw, float* dr,
                        float* dc, float* scratch, std::int64_t out, std::int64_t in, std::int64_t groups,
                        void* stream);

}  // namespace gaugelab::gpt2::cuda
