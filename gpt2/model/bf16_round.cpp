#include "gpt2/model/bf16_round.hpp"

#include <cstdint>
#include <cstring>

#include <cmath>
#include <limits>

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

namespace {

// n floats rounded to bf16 precision, ties to even, from src into dst (which may be src): the bit arithmetic of
// c10's round_to_nearest_even, with the low 16 bits cleared so the value stays a float32. NaN stays a quiet NaN of
// the same sign (the carry would otherwise turn some NaNs into infinities).
void round_floats(const float* src, float* dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    const std::uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
    const std::uint32_t out = nan ? ((u | 0x00400000u) & 0xFFFF0000u) : rounded;
    std::memcpy(dst + i, &out, sizeof out);
  }
}

bool one_pass(const at::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && x.is_contiguous();
}

constexpr std::int64_t kGrain = 1 << 15;  // floats per parallel task (128 KiB)

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Bf16Round : public torch::autograd::Function<Bf16Round> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x) { return round_to_bf16(x); }
  static variable_list backward(AutogradContext*, variable_list grad_out) { return {bf16_round(grad_out[0])}; }
};

// The causal scores s = q·kᵀ/√d_h [B, H, T, T] float32, −∞ above the diagonal (as the kernel computes them: a
// float32 product of the bf16 operands, scaled).
at::Tensor causal_scores(const at::Tensor& q, const at::Tensor& k) {
  const std::int64_t T = q.size(-2);
  const at::Tensor future = at::ones({T, T}, q.options().dtype(at::kBool)).triu(1);
  return at::matmul(q, k.transpose(-2, -1))
      .mul_(1.0 / std::sqrt(static_cast<double>(q.size(-1))))
      .masked_fill_(future, -std::numeric_limits<double>::infinity());
}

struct Bf16Attention : public torch::autograd::Function<Bf16Attention> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const at::Tensor s = causal_scores(q, k);             // [B, H, T, T]
    const at::Tensor m = s.amax({-1}, /*keepdim=*/true);  // [B, H, T, 1]
    at::Tensor p = (s - m).exp_();                        // unnormalised weights, float32
    const at::Tensor l = p.sum({-1}, /*keepdim=*/true);   // their float32 sum
    const at::Tensor lse = m + l.log();
    round_to_bf16_(p);                                    // the kernel's bf16 weights for the product with v
    at::Tensor o = at::matmul(p, v).div_(l);              // [B, H, T, d_h]
    round_to_bf16_(o);                                    // the kernel writes its output in bf16
    ctx->save_for_backward({q, k, v, o, lse});
    return o;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &o = saved[3], &lse = saved[4];
    const at::Tensor dO = grad_out[0];                                  // [B, H, T, d_h], bf16 values
    const at::Tensor P = (causal_scores(q, k) - lse).exp_();            // [B, H, T, T] float32
    const at::Tensor dV = at::matmul(round_to_bf16(P).transpose(-2, -1), dO);
    const at::Tensor dsum = (dO * o).sum({-1}, /*keepdim=*/true);       // [B, H, T, 1]
    at::Tensor dS = P * (at::matmul(dO, v.transpose(-2, -1)) - dsum);  // float32
    round_to_bf16_(dS);                                                 // bf16 before its two products
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    return {at::matmul(dS, k).mul_(scale), at::matmul(dS.transpose(-2, -1), q).mul_(scale), dV};
  }
};

}  // namespace

at::Tensor round_to_bf16(const at::Tensor& x) {
  if (!one_pass(x)) return x.to(at::kBFloat16).to(x.scalar_type());
  at::Tensor out = at::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain,
                   [&](std::int64_t b, std::int64_t e) { round_floats(src + b, dst + b, e - b); });
  return out;
}

void round_to_bf16_(at::Tensor& x) {
  if (!one_pass(x)) {
    x.copy_(x.to(at::kBFloat16));
    return;
  }
  float* p = x.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain, [&](std::int64_t b, std::int64_t e) { round_floats(p + b, p + b, e - b); });
}

at::Tensor bf16_round(const at::Tensor& x) { return Bf16Round::apply(x); }

at::Tensor emulated_bf16_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return Bf16Attention::apply(q, k, v);
}

at::Tensor emulate_bf16(const at::Tensor& x) {
  return x.defined() && bf16_emulation_enabled() ? bf16_round(x) : x;
}

}  // namespace gaugelab::gpt2
