// Emulated bf16 (Precision::bf16_emulated, runtime.hpp): the values bf16 autocast gives at a matmul, from float32
// GEMMs. Autocast casts a matmul's float32 operands to bf16; the GEMM accumulates in float32 and writes bf16; its
// backward receives the output's gradient in bf16 and writes the operands' gradients as bf16 GEMM outputs. The
// emulation rounds to bf16 (round to nearest, ties to even: a cast to bf16 and back) at exactly those points and
// computes in float32 everywhere else. With R = bf16_round (forward: round the input; backward: round the incoming
// gradient) around a float32 linear map y = R(R(x)·R(W)ᵀ + R(b)), autograd's own backward of the linear map gives
//   dx = R(R(g)·R(W)),   dW = R(R(g)ᵀ·R(x)),   db = R(Σ R(g))
// which is a bf16 GEMM with float32 accumulation, as autocast's backward computes it. An elementwise op between two
// matmuls (GELU, a LayerNorm of bf16 values) then runs in float32 and is rounded once at the next matmul's input:
// what autocast gives too, since it computes such an op in float32 and rounds its output. gpt2/README.md
// ("Emulated bf16") says what this does not reproduce.
#pragma once

#include <ATen/core/Tensor.h>

namespace gaugelab::gpt2 {

/// x rounded to the nearest bf16 value (ties to even), in x's dtype: x.to(bf16).to(x.dtype()) (a NaN stays a NaN,
/// its payload aside), in one pass for a contiguous float32 tensor on the CPU. No autograd.
at::Tensor round_to_bf16(const at::Tensor& x);
/// The same in place.
void round_to_bf16_(at::Tensor& x);

/// The autograd op R: forward round_to_bf16(x), backward round_to_bf16 of the incoming gradient (itself through
/// bf16_round, so a second derivative exists).
at::Tensor bf16_round(const at::Tensor& x);

/// Causal attention softmax(q·kᵀ/√d_h)·v for emulated bf16, with the CPU attention kernel's own roundings under
/// autocast (ATen's flash-attention kernel for bf16): forward, the unnormalised weights exp(s − max) rounded to bf16
/// before they multiply v and the output divided by their float32 sum; backward, dV = round(P)ᵀ·dO and
/// dS = P ⊙ (dO·vᵀ − Σ dO ⊙ o) rounded before dQ = dS·k/√d_h and dK = dSᵀ·q/√d_h, with P = exp(s − logsumexp) in
/// float32. q, k, v [B, H, T, d_h] float32 holding bf16 values (the caller rounds them and the output with
/// emulate_bf16, which also rounds the gradients). Exact for T up to the kernel's key block (512); longer sequences
/// get one softmax block where the kernel rescales block by block. No dropout; not differentiable twice.
at::Tensor emulated_bf16_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// bf16_round(x) while this thread emulates bf16 (bf16_emulation_enabled, runtime.hpp), else x itself; an
/// undefined x (an absent bias) stays undefined. The model calls it at each matmul's operands and output.
at::Tensor emulate_bf16(const at::Tensor& x);

}  // namespace gaugelab::gpt2
