#include "gpt2/model/lrm.hpp"

#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/bf16_round.hpp"
#include "gpt2/model/lrm_weight_bf16.hpp"
#include "gpt2/ops/lrm_weight.hpp"

namespace gaugelab::gpt2 {

const char* param_role_name(ParamRole r) {
  switch (r) {
    case ParamRole::matrix: return "matrices";
    case ParamRole::multiplier_qk: return "multipliers_qk";
    case ParamRole::multiplier_other: return "multipliers_other";
    case ParamRole::bias_norm: return "biases_norms";
    case ParamRole::embedding: return "embeddings";
  }
  return "?";
}

LrmLinear::LrmLinear(std::int64_t in, std::int64_t rows_per_group, const std::vector<GroupSpec>& specs, bool with_bias) {
  const auto n_groups = static_cast<std::int64_t>(specs.size());
  if (n_groups < 1) throw std::invalid_argument("LrmLinear: need at least one group");
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  weight = at::zeros({n_groups * rows_per_group, in}, f32);
  if (with_bias) bias = at::zeros({n_groups * rows_per_group}, f32);
  for (const GroupSpec& s : specs) {
    Group g;
    g.tag = s.tag;
    g.mode = s.mode;
    g.qk = s.qk;
    if (s.mode == LrmMode::scalar) g.s = at::ones({1}, f32);
    if (lrm_has_row(s.mode)) g.r = at::ones({rows_per_group}, f32);
    if (lrm_has_column(s.mode)) g.c = at::ones({in}, f32);
    groups.push_back(std::move(g));
  }
}

at::Tensor LrmLinear::Group::row_scale(std::int64_t rows) const {
  if (r.defined()) return r;
  if (s.defined()) return s.expand({rows});
  return {};
}

bool LrmLinear::has_multipliers() const {
  for (const Group& g : groups)
    if (g.mode != LrmMode::none) return true;
  return false;
}

std::pair<at::Tensor, at::Tensor> LrmLinear::scales() const {
  const auto n_groups = static_cast<std::int64_t>(groups.size());
  const std::int64_t rows = rows_per_group(), in = in_features();
  if (n_groups == 1) return {groups[0].row_scale(rows), groups[0].c};  // the common case
  bool any_row = false, any_col = false;
  for (const Group& g : groups) {
    any_row |= g.row_scale(rows).defined();
    any_col |= g.c.defined();
  }
  // Groups without a factor contribute ones, so one row scale [out] and one column scale per group [G, in].
  at::Tensor r, c;
  if (any_row) {
    std::vector<at::Tensor> rs;
    for (const Group& g : groups) {
      at::Tensor x = g.row_scale(rows);
      rs.push_back(x.defined() ? x : at::ones({rows}, weight.options()));
    }
    r = at::cat(rs);  // [G·rows]
  }
  if (any_col) {
    std::vector<at::Tensor> cs;
    for (const Group& g : groups) cs.push_back(g.c.defined() ? g.c : at::ones({in}, weight.options()));
    c = at::stack(cs);  // [G, in]
  }
  return {r, c};
}

at::Tensor LrmLinear::effective_weight() const {
  if (!has_multipliers()) return weight;
  const auto [r, c] = scales();
  return lrm_effective_weight(weight, r, c);
}

at::Tensor LrmLinear::matmul_weight(KernelPath path) const {
  if (!has_multipliers() || path == KernelPath::aten) return effective_weight();
  const auto [r, c] = scales();
  return lrm_weight_fused(weight, r, c, path) ? lrm_effective_weight_bf16(weight, r, c) : lrm_effective_weight(weight, r, c);
}

at::Tensor LrmLinear::forward(const at::Tensor& x, KernelPath path) const {
  // Emulated bf16 rounds the operands and the output where autocast casts and its GEMM writes (bf16_round.hpp).
  return emulate_bf16(at::linear(emulate_bf16(x), emulate_bf16(matmul_weight(path)), emulate_bf16(bias)));
}

void LrmLinear::merge_multipliers() {
  if (!owns_weight) throw std::logic_error("LrmLinear::merge_multipliers: the weight is shared (tied head)");
  at::NoGradGuard no_grad;
  weight.copy_(effective_weight());
  for (Group& g : groups) {
    for (at::Tensor* t : {&g.s, &g.r, &g.c})
      if (t->defined()) t->fill_(1.0);
  }
}

void LrmLinear::visit(const std::string& prefix, const ParamVisitor& f) {
  if (owns_weight) f(prefix + "weight", weight, ParamRole::matrix);
  if (bias.defined()) f(prefix + "bias", bias, ParamRole::bias_norm);
  for (Group& g : groups) {
    const std::string suffix = g.tag.empty() ? "" : "_" + g.tag;
    const ParamRole row_role = g.qk ? ParamRole::multiplier_qk : ParamRole::multiplier_other;
    if (g.s.defined()) f(prefix + "s" + suffix, g.s, row_role);
    if (g.r.defined()) f(prefix + "r" + suffix, g.r, row_role);
    if (g.c.defined()) f(prefix + "c" + suffix, g.c, ParamRole::multiplier_other);
  }
}

}  // namespace gaugelab::gpt2
