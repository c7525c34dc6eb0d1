// The language-model head and its loss: logits = x·Wᵀ over the padded vocabulary, sliced back to
// the real one, and the mean next-token cross-entropy. Most of a small model's FLOPs and memory
// traffic are here (a [B·T, V] matrix), so it lives in one place, optimised alone:
//   * the loss never materialises log-probabilities: per chunk of rows it forms the logits in a
//     workspace reused across steps (a fresh 200 MB buffer per step costs page faults on the CPU),
//     takes logsumexp in place (max, exp, sum: at::logsumexp would allocate another [rows, V]
//     temporary and ran 4x slower here), and, when gradients are wanted, turns the logits in place into
//     (softmax − onehot)/n and multiplies them into dL/dx and dL/dW right away (as llm.c does);
//     backward then only scales those by the incoming gradient. Nothing of the workspace is needed
//     after the forward, so several forwards before one backward (accumulation) stay correct.
//   * padded vocabulary columns are masked to −∞: they get probability 0 and gradient 0.
//   * under bf16 autocast the matmuls run in bf16 and logsumexp/softmax in float32; dL/dW's per-chunk products
//     are summed in float32 (a bf16 running sum over a fitted micro-batch's 40-60 chunks loses the small ones).
//     Emulated bf16 (bf16_round.hpp) computes in float32 and rounds to bf16 where that path's products are bf16.
//   * on CUDA in bf16 (KernelPath::fused, the default, where the kernel is built), those ~10 passes over each
//     chunk are one kernel (model/cuda/lm_head_ce_kernel.hpp): the chunk is read twice and written once
//     (GPT-2 124M on an H200: 8.4 ms of a 40 ms step in the passes). The passes stay the reference
//     (tests/parity) and the path on the CPU, in float32, and with KernelPath::aten.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "gpt2/model/kernel_path.hpp"

namespace gaugelab::gpt2 {

/// Buffers the loss reuses from step to step (grown on demand, one per dtype). Not thread-safe:
/// one workspace per concurrently running loss.
struct LmHeadWorkspace {
  at::Tensor logits;     // [rows, padded] in the compute dtype
  at::Tensor logits_f32;  // [rows, padded] float32, only for a bf16 compute dtype
  std::int64_t chunk_rows = 4096;  // rows per chunk: bounds the workspace at chunk_rows × padded
  KernelPath kernel = KernelPath::fused;  // how the chunk's softmax and gradient are formed (kernel_path.hpp)
};

/// Logits [B, T, vocab] in float32 for final hidden states x [B, T, d] and head weight w [padded, d].
at::Tensor lm_head_logits(const at::Tensor& x, const at::Tensor& w, std::int64_t vocab);

/// Mean cross-entropy of softmax(x·wᵀ)[:, :vocab] against targets [B, T] (int64; −1 = ignored),
/// float32 scalar, differentiable in x and w. `ws` is reused across calls.
at::Tensor lm_head_loss(const at::Tensor& x, const at::Tensor& w, const at::Tensor& targets, std::int64_t vocab,
                        LmHeadWorkspace& ws);

}  // namespace gaugelab::gpt2
