// What the gradient-projection tests share (tests/gpt2/test_head_projection.cpp and the parity table's
// projection rows): a random attention layer with its gradients, and one head of it in the core's
// row-vector convention.
#pragma once

#include <cstdint>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/randn.h>

#include "core/attention_head.hpp"
#include "gpt2/inspect/layer_tensors.hpp"

namespace gaugelab::test {

struct LayerTensors {
  at::Tensor w_attn, b_attn, w_proj, g_attn, g_battn, g_proj;  // [3d, d], [3d], [d, d] and their gradients
};

/// float64 N(0, 1) weights and gradients of one layer of width d, drawn on the CPU from `seed`.
inline LayerTensors random_layer(std::int64_t d, bool bias, std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  LayerTensors t;
  t.w_attn = at::randn({3 * d, d}, gen, f64);
  t.w_proj = at::randn({d, d}, gen, f64);
  t.g_attn = at::randn({3 * d, d}, gen, f64);
  t.g_proj = at::randn({d, d}, gen, f64);
  if (bias) {
    t.b_attn = at::randn({3 * d}, gen, f64);
    t.g_battn = at::randn({3 * d}, gen, f64);
  }
  return t;
}

/// Head i of the layer (w [3d, d], b [3d] or undefined, p [d, d]) in the core's row-vector convention
/// (biases 0 when undefined).
inline core::AttentionHead<double> core_head(const at::Tensor& w, const at::Tensor& b, const at::Tensor& p, std::int64_t i,
                                             std::int64_t H) {
  const std::int64_t d = w.size(1), dh = d / H;
  auto rows = [&](std::int64_t s) { return gpt2::to_mat(w.narrow(0, s * d + i * dh, dh)).transpose().eval(); };  // [d, dh]
  auto bias = [&](std::int64_t s) {
    return b.defined() ? core::RowVec<double>(gpt2::to_vec(b.narrow(0, s * d + i * dh, dh)).transpose())
                       : core::RowVec<double>::Zero(dh);
  };
  return {rows(0), rows(1), rows(2), gpt2::to_mat(p.narrow(1, i * dh, dh)).transpose(), bias(0), bias(1), bias(2)};
}

}  // namespace gaugelab::test
