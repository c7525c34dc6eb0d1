#include "gpt2/train/optimizer.hpp"

#include <stdexcept>
#include <string>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/mv.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include "gpt2/model/tensor_bytes.hpp"

namespace gaugelab::gpt2 {

TrainOptimizer::TrainOptimizer(GPT& model, const OptimizerSettings& s) {
  if (s.hidden_matrices != core::RuleKind::adamw && s.hidden_matrices != core::RuleKind::muon)
    throw std::invalid_argument(std::string("TrainOptimizer: the hidden matrices step by adamw or muon, not ") +
                                std::string(core::rule_kind_name(s.hidden_matrices)));
  for (const ParamGroup& pg : model.parameter_groups()) {
    Group g;
    g.name = pg.name;
    g.names = pg.names;
    g.params = pg.params;
    switch (pg.role) {
      case ParamRole::matrix: g.weight_decay = s.wd_matrices; break;
      case ParamRole::multiplier_qk: g.weight_decay = s.wd_multipliers_qk; break;
      case ParamRole::multiplier_other: g.weight_decay = s.wd_multipliers_other; break;
      case ParamRole::bias_norm: g.weight_decay = s.wd_biases_norms; break;
      case ParamRole::embedding: g.weight_decay = s.wd_embeddings; break;
    }
    const bool multiplier = pg.role == ParamRole::multiplier_qk || pg.role == ParamRole::multiplier_other;
    g.multiplier = multiplier;
    g.lr_scale = multiplier ? s.multiplier_lr_scale : 1.0;
    g.clipped = !multiplier || s.clip_multipliers;
    if (s.hidden_matrices == core::RuleKind::muon && pg.role == ParamRole::matrix) {  // hidden matrices to Muon; an untied LM head stays AdamW
      Group head;
      head.name = "head";
      head.weight_decay = g.weight_decay;
      for (std::size_t i = 0; i < g.names.size(); ++i) {
        if (g.names[i].rfind("lm_head.", 0) != 0) continue;
        head.names.push_back(g.names[i]);
        head.params.push_back(g.params[i]);
        g.names.erase(g.names.begin() + static_cast<std::ptrdiff_t>(i));
        g.params.erase(g.params.begin() + static_cast<std::ptrdiff_t>(i));
        --i;
      }
      g.rule = core::RuleKind::muon;
      g.weight_decay = s.muon_settings.weight_decay;
      if (!head.params.empty()) groups_.push_back(std::move(head));
    }
    groups_.push_back(std::move(g));
  }
  for (Group& g : groups_)
    for (const at::Tensor& p : g.params) {
      g.m.push_back(at::zeros_like(p));  // Muon: the momentum buffer
      g.v.push_back(at::zeros_like(p));  // Muon: unused
      g.steps.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    }
  beta1_ = s.beta1, beta2_ = s.beta2, eps_ = s.eps;
  muon_ = s.muon_settings;
}

void TrainOptimizer::zero_grad() {
  for (Group& g : groups_)
    for (at::Tensor& p : g.params) p.mutable_grad().reset();
}

GradNorms TrainOptimizer::clip_grad_norm(double max_norm) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads, clipped_grads;  // [n] every gradient; the clipped set's
  std::vector<double> in_clipped, in_mult;       // [n] 0/1 membership of each gradient
  for (Group& g : groups_)
    for (at::Tensor& p : g.params)
      if (p.grad().defined()) {
        grads.push_back(p.grad());
        if (g.clipped) clipped_grads.push_back(p.grad());
        in_clipped.push_back(g.clipped ? 1.0 : 0.0);
        in_mult.push_back(g.multiplier ? 1.0 : 0.0);
      }
  if (grads.empty()) return {};
  // One norm per tensor. The clipped set's norm and coefficient are torch's float32 arithmetic
  // (clip_grad_norm_: the norm of the per-tensor norms; coef = max/(norm + 1e-6) clamped to 1, applied
  // on the device without a sync); total and multiplier norms are float64 sums of the squared
  // per-tensor norms. One transfer to the host brings all three.
  const std::vector<at::Tensor> norms = at::_foreach_norm(grads, 2);  // [n] float32 scalars
  std::vector<at::Tensor> clipped_norms;
  for (std::size_t i = 0; i < norms.size(); ++i)
    if (in_clipped[i] != 0) clipped_norms.push_back(norms[i]);
  const at::Tensor clipped = clipped_norms.empty() ? at::zeros({}, norms[0].options()) : at::stack(clipped_norms).norm();
  if (max_norm > 0 && !clipped_grads.empty()) at::_foreach_mul_(clipped_grads, (max_norm / (clipped + 1e-6)).clamp_max(1.0));
  const at::Tensor sq = at::stack(norms).to(at::kDouble).square();  // [n]
  const auto f64 = sq.options();
  const at::Tensor w = at::stack({at::ones_like(sq), at::tensor(in_mult, f64).to(sq.device())});  // [2, n]
  const at::Tensor all = at::cat({at::mv(w, sq).sqrt(), clipped.to(at::kDouble).reshape({1})}).to(at::kCPU);  // [3]
  const double* v = all.data_ptr<double>();
  return GradNorms{v[0], v[2], v[1]};
}

void TrainOptimizer::step(double lr, double muon_lr_factor) {
  at::NoGradGuard no_grad;
  for (Group& g : groups_) {
    if (g.rule == core::RuleKind::muon) {
      const std::string qkv_tail = "attn.c_attn.weight";
      for (std::size_t i = 0; i < g.params.size(); ++i) {
        if (!g.params[i].grad().defined()) continue;
        const std::string& n = g.names[i];
        const bool qkv = n.size() >= qkv_tail.size() && n.compare(n.size() - qkv_tail.size(), qkv_tail.size(), qkv_tail) == 0;
        muon_update(g.params[i], g.params[i].grad(), g.m[i], muon_lr_factor * muon_.lr, muon_, qkv);
        g.steps[i].add_(1);
      }
      continue;
    }
    std::vector<at::Tensor> params, grads, m, v, steps;
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      if (!g.params[i].grad().defined()) continue;
      params.push_back(g.params[i]);
      grads.push_back(g.params[i].grad());
      m.push_back(g.m[i]);
      v.push_back(g.v[i]);
      steps.push_back(g.steps[i]);
    }
    if (params.empty()) continue;
    for (at::Tensor& s : steps) s.add_(1);
    at::_fused_adamw_(params, grads, m, v, {}, steps, lr * g.lr_scale, beta1_, beta2_, g.weight_decay, eps_, false,
                      false);
  }
}

std::vector<at::Tensor> TrainOptimizer::snapshot() const {
  std::vector<at::Tensor> out;
  for (const Group& g : groups_)
    for (const at::Tensor& p : g.params) out.push_back(p.detach().clone());
  return out;
}

std::map<std::string, double> TrainOptimizer::update_ratios(const std::vector<at::Tensor>& before) const {
  at::NoGradGuard no_grad;
  std::map<std::string, double> out;
  std::size_t i = 0;
  for (const Group& g : groups_) {
    std::vector<at::Tensor> du, w;  // squared norms, summed on the device, one sync per group
    for (const at::Tensor& p : g.params) {
      if (i >= before.size()) throw std::invalid_argument("update_ratios: snapshot has fewer tensors than the groups");
      du.push_back(p.detach().sub(before[i++]).square().sum());
      w.push_back(p.detach().square().sum());
    }
    const at::Tensor r = at::stack(du).sum().sqrt().div(at::stack(w).sum().sqrt());
    out[g.name] = r.item<double>();
  }
  return out;
}

AdamMoments TrainOptimizer::moments(const at::Tensor& param) const {
  for (const Group& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i)
      if (g.params[i].is_same(param)) return {g.m[i], g.v[i]};
  throw std::invalid_argument("TrainOptimizer::moments: not a parameter of this optimizer");
}

std::vector<at::Tensor> TrainOptimizer::parameters() const {
  std::vector<at::Tensor> all;
  for (const Group& g : groups_) all.insert(all.end(), g.params.begin(), g.params.end());
  return all;
}

std::vector<safetensors::TensorData> TrainOptimizer::state_tensors() const {
  std::vector<safetensors::TensorData> out;
  for (const Group& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      out.push_back(to_tensor_data("m/" + g.names[i], g.m[i]));
      out.push_back(to_tensor_data("v/" + g.names[i], g.v[i]));
      out.push_back(to_tensor_data("step/" + g.names[i], g.steps[i]));
    }
  return out;
}

void TrainOptimizer::load_state(const safetensors::File& f) {
  at::NoGradGuard no_grad;
  auto restore = [&](at::Tensor& dst, const std::string& name) {
    const safetensors::TensorView& view = f.at(name);
    const at::Tensor src = to_float_tensor(view);
    if (!src.sizes().equals(dst.sizes()))
      throw std::runtime_error(f.what + ": optimizer state '" + name + "' has shape " + shape_string(src.sizes()) +
                               ", the parameter needs " + shape_string(dst.sizes()));
    dst.copy_(src);
  };
  for (Group& g : groups_)
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      restore(g.m[i], "m/" + g.names[i]);
      restore(g.v[i], "v/" + g.names[i]);
      restore(g.steps[i], "step/" + g.names[i]);
    }
}

}  // namespace gaugelab::gpt2
