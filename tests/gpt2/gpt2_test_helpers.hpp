// Shared helpers of the GPT-2 tests: a small config, random multipliers and biases, error measures.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include "gpt2/model/model.hpp"

namespace gaugelab::test {

/// The "nano" preset with a 500-token vocabulary: padded to 512, so the slicing is exercised.
inline gpt2::ModelConfig nano_config() {
  gpt2::ModelConfig c = gpt2::ModelConfig::preset("nano");
  c.vocab_size = 500;
  return c;
}

/// max |a − b| / max |b| (the largest error relative to the largest reference value).
inline double max_rel_diff(const at::Tensor& a, const at::Tensor& b) {
  return a.sub(b).abs().max().item<double>() / b.abs().max().item<double>();
}

/// Whether a and b hold the same bits: both undefined, or the same dtype, shape and bytes (so -0 and +0 differ, and
/// a NaN equals the same NaN). For reruns that must repeat bit for bit.
inline bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor x = a.to(at::kCPU).contiguous(), y = b.to(at::kCPU).contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

/// Sets every tensor of `role` to exp(spread·N(0,1)) (multipliers) or N(mean, spread) (others), in place.
inline void randomize_role(gpt2::GPT& model, gpt2::ParamRole role, std::uint64_t seed, double spread) {
  at::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const bool mult = role == gpt2::ParamRole::multiplier_qk || role == gpt2::ParamRole::multiplier_other;
  model.visit([&](const std::string& name, at::Tensor& t, gpt2::ParamRole r) {
    if (r != role && !(mult && (r == gpt2::ParamRole::multiplier_qk || r == gpt2::ParamRole::multiplier_other)))
      return;
    at::Tensor draw = at::empty(t.sizes(), at::TensorOptions().dtype(at::kFloat));
    draw.normal_(0.0, spread, gen);
    const bool gain = name.find("ln_") != std::string::npos && name.find(".weight") != std::string::npos;
    if (mult) draw = draw.exp();
    else if (gain) draw.add_(1.0);
    t.copy_(draw);
  });
}

/// Multipliers exp(0.3·N(0,1)): positive, spread around 1, so no map is left at the identity.
inline void randomize_multipliers(gpt2::GPT& model, std::uint64_t seed) {
  randomize_role(model, gpt2::ParamRole::multiplier_qk, seed, 0.3);
}

/// Biases N(0, 0.1) and LayerNorm gains 1 + N(0, 0.1): gauges must move them too.
inline void randomize_biases_norms(gpt2::GPT& model, std::uint64_t seed) {
  randomize_role(model, gpt2::ParamRole::bias_norm, seed, 0.1);
}

}  // namespace gaugelab::test
