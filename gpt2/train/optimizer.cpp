#include "gpt2/train/optimizer.hpp"

#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include "gpt2/model/tensor_bytes.hpp"

namespace gaugelab::gpt2 {

TrainOptimizer::TrainOptimizer(GPT& model, const OptimizerSettings& s) {
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
    g.clipped = !multiplier || s.clip_multipliers;
    for (const at::Tensor& p : g.params) {
      g.m.push_back(at::zeros_like(p));
      g.v.push_back(at::zeros_like(p));
      g.steps.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    }
    groups_.push_back(std::move(g));
  }
  beta1_ = s.beta1, beta2_ = s.beta2, eps_ = s.eps;
}

void TrainOptimizer::zero_grad() {
  for (Group& g : groups_)
    for (at::Tensor& p : g.params) p.mutable_grad().reset();
}

double TrainOptimizer::clip_grad_norm(double max_norm) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> grads;
  for (Group& g : groups_)
    if (g.clipped)
      for (at::Tensor& p : g.params)
        if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  const at::Tensor norm = at::stack(at::_foreach_norm(grads, 2)).norm();  // float32 scalar
  const double n = norm.item<double>();
  if (max_norm > 0 && n > max_norm) at::_foreach_mul_(grads, max_norm / (n + 1e-6));
  return n;
}

void TrainOptimizer::step(double lr) {
  at::NoGradGuard no_grad;
  for (Group& g : groups_) {
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
    at::_fused_adamw_(params, grads, m, v, {}, steps, lr, beta1_, beta2_, g.weight_decay, eps_, false, false);
  }
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
