// The multipliers' W_eff kernel (gpt2/model/cuda/lrm_weight_kernel.hpp) in the table: W_eff = diag(r)·W̄·diag(c_g)
// in bf16 and its backward, against ops/lrm_weight.hpp's ATen products in float64 on the same inputs. On the CPU the
// rows run ATen's products (the kernel's own reference); on CUDA the kernel, whose W_eff must equal ATen's products
// + cast bit for bit on the same card, and whose forward and backward run twice with the same bits (fixed partitions
// and orders, no atomics). The rows at GPT-2 124M's shapes run on CUDA only.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include <ATen/core/grad_mode.h>

#include "gpt2/model/lrm_weight_bf16.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/ops/lrm_weight.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

struct LrmCase {
  std::int64_t out, in, groups;  // c [groups, in] when groups > 1, [in] when 1
  bool row, col, scalar;         // r [out]; c; r a scalar s expanded to [out] (not contiguous)
};
// The backward's rows per block: 96 rows (3 groups of 32, or one) take 1 (fewer than 256 blocks otherwise),
// 768 take 2, 4608 in 3 groups take 16 (several rows and several groups); in 200 and 40 (threads idle on the last
// columns), 8; r alone, c alone, both, and the scalar mode.
constexpr LrmCase kLrmCases[] = {{96, 200, 3, true, true, false}, {96, 200, 1, true, true, false},
                                 {96, 200, 1, true, false, false}, {96, 200, 1, false, true, false},
                                 {768, 40, 1, true, true, false}, {96, 200, 3, false, true, true},
                                 {4608, 8, 3, true, true, false}};
// GPT-2 124M's multiplied maps, rows and columns (the default placement): c_attn [2304, 768] in 3 groups (Q, K, V;
// 8 rows per backward block), c_fc [3072, 768] (8 rows), mlp_proj [768, 3072] (2 rows); and the widest row the
// backward takes, in = kLrmWeightMaxIn = 12280, whose dc partials fill the 48 KB of shared memory (3 groups of 16
// rows, one row per block).
constexpr LrmCase kLrmCases124M[] = {{2304, 768, 3, true, true, false}, {3072, 768, 1, true, true, false},
                                     {768, 3072, 1, true, true, false}, {48, 12280, 3, true, true, false}};

struct LrmOut {
  at::Tensor e, dw, dr, dc;  // float64 on the CPU (dr, dc undefined when absent): W_eff and the gradients
};

at::Tensor cpu64(const at::Tensor& t) { return t.defined() ? t.to(at::kCPU, at::kDouble) : at::Tensor(); }

// W_eff in bf16 on `device` (the kernel on CUDA, ATen's products + cast on the CPU) and the gradients of Σ W_eff·R.
LrmOut run_lrm(const LrmCase& k, const at::Tensor& w, const at::Tensor& r, const at::Tensor& c, const at::Tensor& R,
               c10::Device device) {
  auto leaf = [&](const at::Tensor& t) { return t.defined() ? t.clone().to(device).requires_grad_(true) : t; };
  const at::Tensor wd = leaf(w), rd = leaf(r), cd = leaf(c);
  const at::Tensor row = k.scalar ? rd.expand({k.out}) : rd;  // as LrmLinear::Group::row_scale
  at::Tensor e;
  {
    gpt2::AutocastScope autocast(device, gpt2::Precision::bf16);
    if (device.is_cuda()) {
      require_side(gpt2::lrm_weight_fused(wd, row, cd, gpt2::KernelPath::fused), "the W_eff kernel did not run");
      e = gpt2::lrm_effective_weight_bf16(wd, row, cd);
      at::NoGradGuard no_grad;  // the ATen products, cast as autocast would: the same roundings, bit for bit
      const double apart = e.to(at::kFloat)
                               .sub(gpt2::lrm_effective_weight(wd, row, cd).to(at::kBFloat16).to(at::kFloat))
                               .abs()
                               .max()
                               .item<double>();
      require_side(apart == 0.0, "W_eff kernel vs ATen's products + cast on " + device.str() + ": " +
                                     std::to_string(apart) + " apart");
    } else {
      e = gpt2::lrm_effective_weight(wd, row, cd).to(at::kBFloat16);
    }
  }
  require_side(e.scalar_type() == at::kBFloat16, "W_eff is not bf16");
  e.to(at::kFloat).mul(R.to(device)).sum().backward();
  return {cpu64(e), cpu64(wd.grad()), rd.defined() ? cpu64(rd.grad()) : at::Tensor(),
          cd.defined() ? cpu64(cd.grad()) : at::Tensor()};
}

struct LrmErrors {
  double f32 = 0;   // dL/dW̄, dL/dr, dL/dc against float64
  double bf16 = 0;  // W_eff (bf16) against float64
};

template <std::size_t N>
LrmErrors lrm_weight_errors(c10::Device device, const LrmCase (&cases)[N], std::uint64_t seed) {
  LrmErrors worst;
  for (const LrmCase& k : cases) {
    auto gen = cpu_generator(seed++);
    const auto f32 = at::kFloat;
    const at::Tensor w = randn_on({k.out, k.in}, gen, f32, at::kCPU).mul(0.05);
    const at::Tensor s1 = randn_on({1}, gen, f32, at::kCPU).mul(0.2).exp();
    const at::Tensor r = k.row ? randn_on({k.out}, gen, f32, at::kCPU).mul(0.3).exp() : at::Tensor();
    const at::Tensor c = k.col ? (k.groups > 1 ? randn_on({k.groups, k.in}, gen, f32, at::kCPU)
                                               : randn_on({k.in}, gen, f32, at::kCPU)).mul(0.3).exp()
                               : at::Tensor();
    const at::Tensor R = randn_on({k.out, k.in}, gen, f32, at::kCPU).to(at::kBFloat16).to(f32);  // dL/dW_eff
    const at::Tensor rs = k.scalar ? s1 : r;
    const LrmOut ours = run_lrm(k, w, rs, c, R, device);
    if (device.is_cuda()) {  // a rerun: the same bits
      const LrmOut again = run_lrm(k, w, rs, c, R, device);
      const std::string where = "W_eff [" + std::to_string(k.out) + ", " + std::to_string(k.in) + "] in " +
                                std::to_string(k.groups) + " group(s) on " + device.str();
      for (const auto& [name, a, b] : {std::tuple{"W_eff", ours.e, again.e}, std::tuple{"dL/dW", ours.dw, again.dw},
                                       std::tuple{"dL/dr", ours.dr, again.dr}, std::tuple{"dL/dc", ours.dc, again.dc}})
        require_side(test::same_bits(a, b), where + ": a rerun's " + name + " differs in its bits");
    }

    const auto d64 = [](const at::Tensor& t) { return t.defined() ? t.to(at::kDouble).requires_grad_(true) : t; };
    const at::Tensor wr = d64(w), rr = d64(rs), cr = d64(c);
    const at::Tensor er = gpt2::lrm_effective_weight(wr, k.scalar ? rr.expand({k.out}) : rr, cr);
    er.mul(R.to(at::kDouble)).sum().backward();
    worst.bf16 = std::max(worst.bf16, test::max_rel_diff(ours.e, er.detach()));
    worst.f32 = std::max(worst.f32, test::max_rel_diff(ours.dw, wr.grad()));
    if (rr.defined()) worst.f32 = std::max(worst.f32, test::max_rel_diff(ours.dr, rr.grad()));
    if (cr.defined()) worst.f32 = std::max(worst.f32, test::max_rel_diff(ours.dc, cr.grad()));
  }
  return worst;
}

// float32 products and sums of <= 12280 terms against float64: ~1e-6 relative; a wrong group, row or column O(1).
constexpr double kLrmF32Tol = 1e-4;
// W_eff rounded to bf16 once: half an ulp, at most 2^-8 of an entry.
constexpr double kLrmBf16Tol = 4e-3;

double lrm_weight_f32_error(c10::Device device) { return lrm_weight_errors(device, kLrmCases, 930).f32; }
double lrm_weight_bf16_error(c10::Device device) { return lrm_weight_errors(device, kLrmCases, 930).bf16; }
double lrm_weight_124m_f32_error(c10::Device device) { return lrm_weight_errors(device, kLrmCases124M, 960).f32; }
double lrm_weight_124m_bf16_error(c10::Device device) { return lrm_weight_errors(device, kLrmCases124M, 960).bf16; }

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> lrm_kernel_rows() {
  using namespace GAUGELAB_TU;
  return {
      {"gpt2::lrm_effective_weight_bf16: gradients (the W_eff CUDA kernels on CUDA; ATen's products on the CPU)",
       "float64 lrm_effective_weight (diag(r)·W̄·diag(c_g)) and its autograd on the same inputs",
       "W̄ [96, 200] with r and c [3, 200], c [200], r alone, c alone, the scalar s; W̄ [768, 40]; W̄ [4608, 8] with c "
       "[3, 8]; dL/dW̄, dL/dr, dL/dc (max-abs, relative); on CUDA run twice, bit for bit",
       "float32 vs float64", kLrmF32Tol, "float32 products and sums of <= 1536 terms", &lrm_weight_f32_error},
      {"gpt2::lrm_effective_weight_bf16: W_eff (the kernel on CUDA, bit for bit ATen's products + cast there)",
       "float64 lrm_effective_weight on the same inputs", "as the row above; W_eff (max-abs, relative)",
       "bf16 vs float64", kLrmBf16Tol, "W_eff is rounded to bf16 once: half an ulp (<= 2^-8 of an entry)",
       &lrm_weight_bf16_error},
      {"gpt2::lrm_effective_weight_bf16 at GPT-2 124M's shapes: gradients (the W_eff CUDA kernels; CUDA only)",
       "float64 lrm_effective_weight (diag(r)·W̄·diag(c_g)) and its autograd on the same inputs",
       "c_attn W̄ [2304, 768] with r and c [3, 768]; c_fc [3072, 768] and mlp_proj [768, 3072] with r and c; the "
       "widest row the backward takes, W̄ [48, 12280] with r and c [3, 12280] (48 KB of shared memory); dL/dW̄, dL/dr, "
       "dL/dc (max-abs, relative); run twice, bit for bit",
       "float32 vs float64", kLrmF32Tol, "float32 products and sums of <= 12280 terms", &lrm_weight_124m_f32_error,
       /*cuda_only=*/true},
      {"gpt2::lrm_effective_weight_bf16 at GPT-2 124M's shapes: W_eff (the kernel, bit for bit ATen's products + "
       "cast; CUDA only)",
       "float64 lrm_effective_weight on the same inputs", "as the row above; W_eff (max-abs, relative)",
       "bf16 vs float64", kLrmBf16Tol, "W_eff is rounded to bf16 once: half an ulp (<= 2^-8 of an entry)",
       &lrm_weight_124m_bf16_error, /*cuda_only=*/true},
  };
}

}  // namespace gaugelab::parity
