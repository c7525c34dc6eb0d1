#include "gpt2/train/qk_balance.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/stack.h>

#include "gpt2/ops/qk_layer.hpp"
#include "gpt2/train/gaugefix.hpp"

namespace gaugelab::gpt2 {

namespace {

// The effective Q and K rows [d, d] of one block (every multiplier merged).
std::pair<at::Tensor, at::Tensor> effective_qk(const Block& b) {
  const at::Tensor w = b.c_attn.effective_weight().detach();  // [3d, d]: Q rows, K rows, V rows
  const std::int64_t d = w.size(1);
  return {w.narrow(0, 0, d), w.narrow(0, d, d)};
}

}  // namespace

at::Tensor qk_effective_log_ratio(const GPT& model) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> rho;
  for (const Block& b : model.h) {
    const auto [q, k] = effective_qk(b);
    rho.push_back(qk_effective_log_ratio_layer(q, k, model.config().n_head));
  }
  return at::stack(rho);
}

at::Tensor gauge_fix_effective(GPT& model, double eps) {
  if (!has_qk_row_multipliers(model.config()))
    throw std::runtime_error("gauge_fix_effective: needs row multipliers on q and k (placement '" +
                             model.config().lrm.spec() + "')");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    const auto [q, k] = effective_qk(b);
    at::Tensor bq = b.c_attn.bias.defined() ? b.b_q() : at::Tensor(), bk = b.c_attn.bias.defined() ? b.b_k() : at::Tensor();
    gs.push_back(qk_gauge_fix_effective_layer(b.q().r, b.k().r, bq, bk, q, k, model.config().n_head, eps));
  }
  return at::stack(gs);
}

}  // namespace gaugelab::gpt2
