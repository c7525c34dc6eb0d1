// The trainer's optimizer on known gradients: the three logged norms, torch's clipping rule on the
// clipped set only, the multiplier learning-rate scale, and the model switches the protocol adds
// (biases off, exact GELU) — each against a value computed here by hand.
#include <cmath>
#include <map>
#include <string>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/randint.h>

#include "gpt2/train/api.hpp"
#include "gpt2/train/optimizer.hpp"
#include "io/options.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Norms are float32 per tensor, summed in float64: relative 1e-6 covers float32 rounding of a sum
// of up to ~10^4 equal terms (each 2^-24 relative, accumulated pairwise).
constexpr double kNormRel = 1e-6;

bool is_multiplier(gpt2::ParamRole r) {
  return r == gpt2::ParamRole::multiplier_qk || r == gpt2::ParamRole::multiplier_other;
}

// Gives every gradient the constant value `mult_value` (multipliers) or `other_value` (the rest) and
// returns the element counts of both sets.
std::pair<double, double> set_grads(gpt2::GPT& m, double other_value, double mult_value) {
  double n_other = 0, n_mult = 0;
  m.visit([&](const std::string&, at::Tensor& t, gpt2::ParamRole r) {
    const bool mult = is_multiplier(r);
    t.mutable_grad() = at::full_like(t, mult ? mult_value : other_value);
    (mult ? n_mult : n_other) += static_cast<double>(t.numel());
  });
  return {n_other, n_mult};
}

}  // namespace

TEST_CASE("optimizer: total, clipped-set and multiplier norms, clipping scales the clipped set only") {
  gpt2::GPT m(test::nano_config(), 1);
  gpt2::TrainOptimizer opt(m, gpt2::OptimizerSettings{});
  const auto [n_other, n_mult] = set_grads(m, 0.5, 2.0);
  const double clipped = 0.5 * std::sqrt(n_other), mult = 2.0 * std::sqrt(n_mult);
  const gpt2::GradNorms n = opt.clip_grad_norm(1.0);
  CHECK(std::abs(n.clipped - clipped) <= kNormRel * clipped);
  CHECK(std::abs(n.multipliers - mult) <= kNormRel * mult);
  CHECK(std::abs(n.total - std::hypot(clipped, mult)) <= kNormRel * n.total);
  // torch's rule: coef = 1/(norm + 1e-6) on the clipped set; the multipliers' gradients untouched.
  const double coef = 1.0 / (n.clipped + 1e-6);
  m.visit([&](const std::string& name, at::Tensor& t, gpt2::ParamRole r) {
    INFO(name);
    const double g = t.grad().flatten()[0].item<double>();
    if (is_multiplier(r)) CHECK(g == 2.0);
    else CHECK(std::abs(g - 0.5 * coef) <= 1e-6 * 0.5 * coef);
  });
}

TEST_CASE("optimizer: a norm below the clip leaves every gradient as it was") {
  gpt2::GPT m(test::nano_config(), 1);
  gpt2::TrainOptimizer opt(m, gpt2::OptimizerSettings{});
  set_grads(m, 1e-6, 3.0);
  opt.clip_grad_norm(1.0);
  m.visit([&](const std::string&, at::Tensor& t, gpt2::ParamRole r) {
    CHECK(t.grad().flatten()[0].item<float>() == (is_multiplier(r) ? 3.0f : 1e-6f));
  });
}

TEST_CASE("optimizer: --clip-multipliers puts the multipliers into the clipped set") {
  gpt2::GPT m(test::nano_config(), 1);
  gpt2::OptimizerSettings s;
  s.clip_multipliers = true;
  gpt2::TrainOptimizer opt(m, s);
  set_grads(m, 0.5, 2.0);
  const gpt2::GradNorms n = opt.clip_grad_norm(1.0);
  CHECK(std::abs(n.clipped - n.total) <= kNormRel * n.total);
  m.visit([&](const std::string&, at::Tensor& t, gpt2::ParamRole r) {
    if (is_multiplier(r)) CHECK(t.grad().flatten()[0].item<double>() < 2.0);
  });
}

TEST_CASE("optimizer: multiplier lr scale 0 freezes the multipliers while everything else steps") {
  gpt2::GPT m(test::nano_config(), 1);
  gpt2::OptimizerSettings s;
  s.multiplier_lr_scale = 0.0;
  gpt2::TrainOptimizer opt(m, s);
  std::map<std::string, at::Tensor> before;
  for (auto& [name, t] : m.named_parameters()) before.emplace(name, t.detach().clone());
  set_grads(m, 0.1, 0.1);
  opt.step(1e-2);
  m.visit([&](const std::string& name, at::Tensor& t, gpt2::ParamRole r) {
    INFO(name);
    const bool same = t.detach().equal(before.at(name));
    CHECK(same == is_multiplier(r));
  });
}

TEST_CASE("model: without biases there are no bias tensors, and the erf GELU differs from tanh") {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = false;
  gpt2::GPT plain(c, 3);
  for (auto& [name, t] : plain.named_parameters()) CHECK(name.find("bias") == std::string::npos);
  CHECK(gpt2::ModelConfig::from_json(c.to_json()).bias == false);

  c.gelu = gpt2::Gelu::erf;
  gpt2::GPT erf_model(c, 3);
  c.gelu = gpt2::Gelu::tanh;
  gpt2::GPT tanh_model(c, 3);
  const at::Tensor idx = at::randint(0, 500, {2, 16}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  const double diff = erf_model.logits(idx).sub(tanh_model.logits(idx)).abs().max().item<double>();
  CHECK(diff > 0);  // the same weights: only the GELU form differs
  // A checkpoint written before the fields existed (no "bias", no "gelu") reads as it was trained.
  nlohmann::json old = c.to_json();
  old.erase("bias");
  old.erase("gelu");
  const gpt2::ModelConfig back = gpt2::ModelConfig::from_json(old);
  CHECK(back.bias);
  CHECK(back.gelu == gpt2::Gelu::tanh);
}

TEST_CASE("options: the global batch divides over the ranks or is refused") {
  gpt2::TrainOptions o;
  o.batch_size = 12;
  o.grad_accum = 40;
  CHECK(gpt2::rank_grad_accum(o, 1024, 1) == 40);
  CHECK(gpt2::rank_grad_accum(o, 1024, 8) == 5);  // the paper's 12 x 1024 x 40 = 491 520 on 8 GPUs
  CHECK_THROWS_AS(gpt2::rank_grad_accum(o, 1024, 3), io::UsageError);
  o.grad_accum = 1;
  o.batch_tokens = 491520;
  CHECK(gpt2::global_grad_accum(o, 1024) == 40);
  o.batch_tokens = 491521;
  CHECK_THROWS_AS(gpt2::global_grad_accum(o, 1024), io::UsageError);
}

}  // namespace GAUGELAB_TU
