#include "gpt2/lm_head_loss.hpp"

#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/linear.h>

namespace gaugelab::gpt2 {

at::Tensor lm_head_logits(const at::Tensor& x, const at::Tensor& w, std::int64_t vocab) {
  at::Tensor logits = at::linear(x, w);  // [B, T, padded]
  if (logits.size(-1) != vocab) logits = logits.narrow(-1, 0, vocab);
  return logits.to(at::kFloat);
}

at::Tensor lm_head_loss(const at::Tensor& x, const at::Tensor& w, const at::Tensor& targets, std::int64_t vocab) {
  const at::Tensor logits = lm_head_logits(x, w, vocab);
  return at::cross_entropy_loss(logits.reshape({-1, vocab}), targets.reshape({-1}), /*weight=*/{},
                                at::Reduction::Mean, /*ignore_index=*/-1);
}

}  // namespace gaugelab::gpt2
