#include "gpt2/train/qk_balance.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/log.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/stack.h>

#include "gpt2/model/head_gauge.hpp"
#include "gpt2/train/gaugefix.hpp"

namespace gaugelab::gpt2 {

namespace {

struct HeadNorms {
  at::Tensor q;  // [H]
  at::Tensor k;  // [H]
};

// Frobenius norms of each head's rows of the effective Q and K maps of one block.
HeadNorms head_norms(const Block& b, std::int64_t heads) {
  const at::Tensor w = b.c_attn.effective_weight().detach();  // [3d, d]: Q rows, K rows, V rows
  const std::int64_t d = w.size(1);
  auto norms = [&](std::int64_t offset) { return w.narrow(0, offset, d).reshape({heads, -1}).square().sum(1).sqrt(); };
  return {norms(0), norms(d)};
}

}  // namespace

at::Tensor qk_effective_log_ratio(const GPT& model) {
  at::NoGradGuard no_grad;
  const std::int64_t H = model.config().n_head;
  std::vector<at::Tensor> rho;
  for (const Block& b : model.h) {
    const HeadNorms n = head_norms(b, H);
    rho.push_back(at::log(n.q / n.k));
  }
  return at::stack(rho);
}

at::Tensor gauge_fix_effective(GPT& model, double eps) {
  if (!has_qk_row_multipliers(model.config()))
    throw std::runtime_error("gauge_fix_effective: needs row multipliers on q and k (placement '" +
                             model.config().lrm.spec() + "')");
  at::NoGradGuard no_grad;
  const std::int64_t H = model.config().n_head, d = model.config().n_embd;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    const HeadNorms n = head_norms(b, H);
    const at::Tensor g = ((n.q + eps) / (n.k + eps)).sqrt();  // [H]
    rescale_qk_multipliers(b, g.repeat_interleave(d / H));      // r_Q/g, b_Q/g, r_K·g, b_K·g
    gs.push_back(g);
  }
  return at::stack(gs);
}

}  // namespace gaugelab::gpt2
