// The LM head's cross-entropy rows in one CUDA kernel (lm_head_ce_kernel.cu), for bf16 logits: what
// lm_head_loss.cpp otherwise does in ~10 ATen passes over a [rows, padded] chunk (mask, gather, max, a
// float32 copy, subtract, exp, sum, scale, scatter, copy back). Here each row is read twice (an online
// max/sum, then the gradient) and written once, as llm.c's fused classifier does. No LibTorch header:
// plain pointers and the caller's stream, so nvcc compiles it alone.
// Built only where CMake finds a CUDA compiler (GAUGELAB_HAVE_CUDA_KERNELS); lm_head_loss.cpp's ATen passes
// are the reference it is tested against (tests/parity) and the path everywhere else.
#pragma once

#include <cstdint>

namespace gaugelab::gpt2::cuda {

/// For each row i of logits [rows, ld] (bf16; columns >= vocab are padding and ignored):
///   row_loss[i] = logsumexp(logits[i, :vocab]) − logits[i, target[i]]       (float32, target clamped to >= 0)
/// and, when write_grad, logits[i, j] is overwritten in place with the gradient of Σ_i scale[i]·row_loss[i]:
///   (softmax(logits[i, :vocab])_j − [j == target[i]])·scale[i], and 0 in the padding columns.
/// targets: int64 [rows]; scale: float32 [rows] (1/n_valid, or 0 for an ignored row). stream: a cudaStream_t.
/// Returns 0, or the CUDA error code of the launch.
int lm_head_ce_rows_bf16(void* logits, std::int64_t rows, std::int64_t vocab, std::int64_t ld,
                         const std::int64_t* targets, const float* scale, float* row_loss, bool write_grad,
                         void* stream);

}  // namespace gaugelab::gpt2::cuda
