#include "gpt2/model/bf16_round.hpp"

#include <cstdint>
#include <cstring>

#include <ATen/Parallel.h>
#include <ATen/ops/empty_like.h>
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

}  // namespace

at::Tensor round_to_bf16(const at::Tensor& x) {
  if (!one_pass(x)) return x.to(at::kBFloat16).to(x.scalar_type());
  at::Tensor out = at::empty_like(x);
  const float* src = x.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, x.numel(), kGrain, [&](std::int64_t b, std::int64_t e) { round_floats(src + b, dst + b, e - b); });
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

at::Tensor emulate_bf16(const at::Tensor& x) {
  return x.defined() && bf16_emulation_enabled() ? bf16_round(x) : x;
}

}  // namespace gaugelab::gpt2
