// The language-model head and its loss: logits = x·Wᵀ over the padded vocabulary, sliced back to
// the real one, and the mean next-token cross-entropy. Most of a small model's FLOPs and memory
// traffic are here (a [B·T, V] matrix), so it lives in one place that can be optimised alone.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace gaugelab::gpt2 {

/// Logits [B, T, vocab] in float32 for final hidden states x [B, T, d] and head weight w [padded, d].
at::Tensor lm_head_logits(const at::Tensor& x, const at::Tensor& w, std::int64_t vocab);

/// Mean cross-entropy of softmax(x·wᵀ)[:, :vocab] against targets [B, T] (int64; -1 = ignored),
/// float32 scalar; differentiable in x and w.
at::Tensor lm_head_loss(const at::Tensor& x, const at::Tensor& w, const at::Tensor& targets, std::int64_t vocab);

}  // namespace gaugelab::gpt2
