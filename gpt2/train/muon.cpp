#include "gpt2/train/muon.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/matmul.h>

namespace gaugelab::gpt2 {

at::Tensor newton_schulz5(const at::Tensor& G, int steps, bool bf16) {
  const double a = 3.4445, b = -4.7750, c = 2.0315;
  const bool tall = G.size(0) > G.size(1);
  at::Tensor X = bf16 ? G.to(at::kBFloat16) : G;
  if (tall) X = X.t();  // [k, l], k = min(rows, cols): the Gram XXᵀ is the small one
  X = X / (X.norm() + 1e-7);
  for (int i = 0; i < steps; ++i) {
    const at::Tensor A = at::matmul(X, X.t());       // [k, k]
    const at::Tensor B = b * A + c * at::matmul(A, A);  // [k, k]
    X = a * X + at::matmul(B, X);                     // [k, l]
  }
  if (tall) X = X.t();
  return X.to(G.scalar_type()).contiguous();
}

void muon_update(at::Tensor& param, const at::Tensor& grad, at::Tensor& buf, double lr, const MuonSettings& s,
                 bool qkv) {
  at::NoGradGuard no_grad;
  buf.lerp_(grad, 1.0 - s.momentum);
  const at::Tensor g = grad.lerp(buf, s.momentum);  // Nesterov
  auto ortho = [&](const at::Tensor& m) {           // [rows, cols] -> NS5 scaled by √max(1, rows/cols)
    const double scale = std::sqrt(std::max(1.0, static_cast<double>(m.size(0)) / static_cast<double>(m.size(1))));
    return newton_schulz5(m, 5, s.bf16) * scale;
  };
  at::Tensor update;
  if (qkv && s.split_qkv) {
    const std::int64_t d = g.size(0) / 3;
    update = at::cat({ortho(g.narrow(0, 0, d)), ortho(g.narrow(0, d, d)), ortho(g.narrow(0, 2 * d, d))}, 0);
  } else {
    update = ortho(g);
  }
  param.mul_(1.0 - lr * s.weight_decay);
  param.add_(update, -lr);
}

}  // namespace gaugelab::gpt2
