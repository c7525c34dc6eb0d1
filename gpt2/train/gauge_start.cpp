#include "gpt2/train/gauge_start.hpp"

#include <cmath>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/head_gauge.hpp"
#include "gpt2/train/gaugefix.hpp"

namespace gaugelab::gpt2 {

at::Tensor offset_qk_gauge(GPT& model, double sigma, std::uint64_t seed) {
  const ModelConfig& c = model.config();
  if (!(sigma >= 0) || !std::isfinite(sigma)) throw std::invalid_argument("offset_qk_gauge: sigma must be >= 0");
  at::Tensor log_g = at::zeros({c.n_layer, c.n_head}, at::TensorOptions().dtype(at::kDouble));
  if (sigma == 0) return log_g;
  if (!has_qk_row_multipliers(c))
    throw std::invalid_argument("a Q/K gauge offset needs row multipliers on q and k (--multipliers '" +
                                c.lrm.spec() + "' has none)");
  at::NoGradGuard no_grad;
  // Its own stream (the seed mixed with a constant): the weights' draw is the same with and without it.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9a06e0ff5e7ULL);
  log_g.normal_(0.0, sigma, gen);
  const std::int64_t dh = c.head_dim();
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    // g [d]: the head's factor repeated over its dh coordinates.
    at::Tensor g = log_g[l].exp().repeat_interleave(dh);
    rescale_qk_multipliers(model.h[static_cast<std::size_t>(l)], g);
  }
  return log_g;
}

}  // namespace gaugelab::gpt2
