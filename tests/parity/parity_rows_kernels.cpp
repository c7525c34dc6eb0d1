// Our own CUDA kernels (gpt2/model/cuda/) in the table. The LM head's fused cross-entropy has no core
// counterpart (the core holds the gauge math, not the loss): its reference is the loss's definition in
// float64, linear + log-softmax over the real vocabulary, on the same bf16-rounded inputs. On the CPU the
// row runs the ATen passes (the kernel's own reference, lm_head_loss.cpp); on CUDA the fused kernel, which
// must also agree with those passes run on the same device. The multipliers' W_eff kernel (and its backward)
// against ops/lrm_weight.hpp's ATen products in float64. The residual add + LayerNorm kernel's reference
// is the same formula in float64 on the same inputs; on CUDA it must also agree with ATen's add and
// layer_norm on the card.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <ATen/core/Reduction.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/lrm_weight_bf16.hpp"
#include "gpt2/model/residual_layer_norm.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/ops/lrm_weight.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// bf16 logits carry 2^-9 relative rounding (of logits of order 3 here: ~6e-3 absolute), which moves the
// softmax by ~0.6 % relative; the gradient is rounded to bf16 (2^-9) before its two matmuls. So loss and
// gradients sit within ~1 % of float64; a wrong target, scale, padding or row errs by O(1).
constexpr double kBf16LossTol = 2e-2;
// Fused kernel against the ATen passes on the same device: the same bf16 logits, float32 softmax in both
// (expf vs __expf: ~1e-7), the same rounding of the gradient to bf16 but for ties flipped by that: a few
// entries one bf16 ulp (2^-8) apart, averaged down by the matmuls.
constexpr double kFusedVsAtenTol = 4e-3;

struct LossAndGrads {
  double loss;
  at::Tensor gx, gw;  // float64 on the CPU
};

// n rows (not a multiple of the chunk: a ragged last chunk), vocab odd (the kernel's scalar tail) and padded
// to a multiple of 8 (its 16-byte loads), some targets ignored (-1).
constexpr std::int64_t kRows = 300, kDim = 64, kVocab = 1001, kPadded = 1024, kChunk = 128;

LossAndGrads run_loss(const at::Tensor& x, const at::Tensor& w, const at::Tensor& t, c10::Device device,
                      gpt2::KernelPath kernel) {
  // Fresh leaves (to() on the same device would return x itself and mark it).
  const at::Tensor xd = x.clone().to(device).requires_grad_(true), wd = w.clone().to(device).requires_grad_(true);
  gpt2::LmHeadWorkspace ws;
  ws.chunk_rows = kChunk;
  ws.kernel = kernel;
  at::Tensor loss;
  {
    gpt2::AutocastScope autocast(device, gpt2::Precision::bf16);
    loss = gpt2::lm_head_loss(xd, wd, t.to(device), kVocab, ws);
  }
  loss.mul(2.0).backward();  // an upstream gradient other than 1
  return {loss.item<double>(), xd.grad().to(at::kCPU, at::kDouble), wd.grad().to(at::kCPU, at::kDouble)};
}

double lm_head_ce_error(c10::Device device) {
  auto gen = cpu_generator(900);
  // Inputs rounded to bf16 first, so that autocast's casts are exact and the reference sees what the op sees.
  const at::Tensor x = randn_on({kRows, kDim}, gen, at::kFloat, at::kCPU).to(at::kBFloat16).to(at::kFloat);
  const at::Tensor w = randn_on({kPadded, kDim}, gen, at::kFloat, at::kCPU).mul(3.0 / std::sqrt(double(kDim)))
                           .to(at::kBFloat16).to(at::kFloat);
  at::Tensor t = at::randint(kVocab, {kRows}, gen, at::TensorOptions().dtype(at::kLong));
  t.narrow(0, 5, 7).fill_(-1);
  const gpt2::KernelPath kernel = gpt2::KernelPath::fused;
  if (device.is_cuda())
    require_side(gpt2::cuda_kernels_built(),
                 "the fused cross-entropy kernel is not built (no CUDA compiler when CMake ran)");
  const LossAndGrads ours = run_loss(x, w, t, device, kernel);

  const at::Tensor xr = x.to(at::kDouble).requires_grad_(true), wr = w.to(at::kDouble).requires_grad_(true);
  const at::Tensor ref = at::cross_entropy_loss(at::linear(xr, wr).narrow(1, 0, kVocab), t, {}, at::Reduction::Mean, -1);
  ref.mul(2.0).backward();
  require_side(wr.grad().narrow(0, kVocab, kPadded - kVocab).abs().max().item<double>() == 0.0, "reference padding");
  require_side(ours.gw.narrow(0, kVocab, kPadded - kVocab).abs().max().item<double>() == 0.0,
               "the padded vocabulary rows of dL/dW are not zero");
  if (device.is_cuda()) {  // the kernel against the passes it replaces, on the same card
    const LossAndGrads aten = run_loss(x, w, t, device, gpt2::KernelPath::aten);
    const double apart = std::max({std::abs(ours.loss - aten.loss) / std::abs(aten.loss),
                                   test::max_rel_diff(ours.gx, aten.gx), test::max_rel_diff(ours.gw, aten.gw)});
    require_side(apart <= kFusedVsAtenTol, "fused kernel vs ATen passes on " + device.str() + ": " +
                                               std::to_string(apart) + " > " + std::to_string(kFusedVsAtenTol));
  }
  return std::max({std::abs(ours.loss - ref.item<double>()) / std::abs(ref.item<double>()),
                   test::max_rel_diff(ours.gx, xr.grad()), test::max_rel_diff(ours.gw, wr.grad())});
}

// --- residual add + LayerNorm ---
// The backward's partitions: 1037 × 200 (d not a multiple of 32: lanes idle on the last columns; 260 blocks of 4
// warps), 5000 × 64 (the 1024-block cap: warps take several rows), 40 × 2000 (3 warps per block) and 8 × 6144 (one
// warp, the whole 48 KB of partials). Each with a branch and a bias; the first also without either (ln_1 of the
// first block; bias-free models).
struct NormShape {
  std::int64_t rows, dim;
  bool all_variants;
};
constexpr NormShape kNormShapes[] = {{1037, 200, true}, {5000, 64, false}, {40, 2000, false}, {8, 6144, false}};
constexpr double kNormEps = 1e-5;

struct NormOut {
  at::Tensor sum, y, gx, gbranch, ggamma, gbeta;  // float64 on the CPU (gbranch, gbeta undefined if absent)
};

at::Tensor cpu64(const at::Tensor& t) { return t.defined() ? t.to(at::kCPU, at::kDouble) : at::Tensor(); }

// loss = Σ y·R + Σ sum·S: both outputs get an upstream gradient (R rounded to bf16: what reaches a bf16 y).
NormOut run_norm(const at::Tensor& x, const at::Tensor& br, const at::Tensor& g, const at::Tensor& b,
                 const at::Tensor& R, const at::Tensor& S, c10::Device device, gpt2::KernelPath path) {
  auto leaf = [&](const at::Tensor& t) { return t.defined() ? t.clone().to(device).requires_grad_(true) : t; };
  const at::Tensor xd = leaf(x), bd = leaf(br), gd = leaf(g), bed = leaf(b);
  gpt2::AddNorm out;
  {
    gpt2::AutocastScope autocast(device, gpt2::Precision::bf16);
    if (device.is_cuda() && path == gpt2::KernelPath::fused)
      require_side(gpt2::add_layer_norm_fused(xd, bd, gd, bed, path), "the fused add + LayerNorm kernel did not run");
    out = gpt2::add_layer_norm(xd, bd, gd, bed, kNormEps, path);
  }
  at::Tensor loss = out.y.to(at::kFloat).mul(R.to(device)).sum();
  if (br.defined()) loss = loss.add(out.sum.mul(S.to(device)).sum());
  loss.backward();
  return {cpu64(out.sum), cpu64(out.y), cpu64(xd.grad()), bd.defined() ? cpu64(bd.grad()) : at::Tensor(),
          cpu64(gd.grad()), bed.defined() ? cpu64(bed.grad()) : at::Tensor()};
}

struct NormErrors {
  double f32 = 0;   // sum, dL/dx, dL/dγ, dL/dβ: float32 arithmetic in both
  double bf16 = 0;  // y, dL/dbranch: rounded to bf16 on the fused path
};

NormErrors add_layer_norm_errors(c10::Device device) {
  NormErrors worst;
  std::uint64_t seed = 910;
  for (const NormShape& shape : kNormShapes) {
    for (const bool with_branch : {true, false}) {
      for (const bool with_bias : {true, false}) {
        if (!shape.all_variants && !(with_branch && with_bias)) continue;
        const std::int64_t rows = shape.rows, dim = shape.dim;
        auto gen = cpu_generator(seed++);
        const auto f32 = at::kFloat;
        const at::Tensor x = randn_on({rows, dim}, gen, f32, at::kCPU).mul(2.0).add(0.5);
        const at::Tensor br = with_branch ? randn_on({rows, dim}, gen, f32, at::kCPU).to(at::kBFloat16)
                                          : at::Tensor();
        const at::Tensor g = randn_on({dim}, gen, f32, at::kCPU).mul(0.3).add(1.0);
        const at::Tensor b = with_bias ? randn_on({dim}, gen, f32, at::kCPU).mul(0.1) : at::Tensor();
        const at::Tensor R = randn_on({rows, dim}, gen, f32, at::kCPU).to(at::kBFloat16).to(f32);
        const at::Tensor S = randn_on({rows, dim}, gen, f32, at::kCPU);
        const NormOut ours = run_norm(x, br, g, b, R, S, device, gpt2::KernelPath::fused);

        // float64 reference on the same inputs
        const auto d64 = [](const at::Tensor& t) {
          return t.defined() ? t.to(at::kDouble).requires_grad_(true) : at::Tensor();
        };
        const at::Tensor xr = d64(x), brr = d64(br), gr = d64(g), bbr = d64(b);
        const at::Tensor sr = brr.defined() ? xr.add(brr) : xr;
        const at::Tensor yr = at::layer_norm(sr, {dim}, gr, bbr, kNormEps);
        at::Tensor lr = yr.mul(R.to(at::kDouble)).sum();
        if (brr.defined()) lr = lr.add(sr.mul(S.to(at::kDouble)).sum());
        lr.backward();

        auto upd = [](double& w, const at::Tensor& a, const at::Tensor& ref) {
          if (a.defined() || ref.defined()) {
            require_side(a.defined() && ref.defined(), "add_layer_norm: a gradient is missing");
            w = std::max(w, test::max_rel_diff(a, ref.detach()));
          }
        };
        upd(worst.f32, ours.sum, sr);
        upd(worst.f32, ours.gx, xr.grad());
        upd(worst.f32, ours.ggamma, gr.grad());
        upd(worst.f32, ours.gbeta, bbr.defined() ? bbr.grad() : at::Tensor());
        upd(worst.bf16, ours.y, yr);
        upd(worst.bf16, ours.gbranch, brr.defined() ? brr.grad() : at::Tensor());
        if (device.is_cuda()) {  // the kernels against the ATen ops they replace, on the same card
          const NormOut aten = run_norm(x, br, g, b, R, S, device, gpt2::KernelPath::aten);
          for (const auto& [a, r] : {std::pair{ours.sum, aten.sum}, std::pair{ours.gx, aten.gx},
                                     std::pair{ours.ggamma, aten.ggamma}, std::pair{ours.gbeta, aten.gbeta}})
            upd(worst.f32, a, r);
          upd(worst.bf16, ours.y, aten.y);
          upd(worst.bf16, ours.gbranch, aten.gbranch);
        }
      }
    }
  }
  return worst;
}

// --- the multipliers' W_eff in bf16 ---
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

struct LrmErrors {
  double f32 = 0;   // dL/dW̄, dL/dr, dL/dc against float64
  double bf16 = 0;  // W_eff (bf16) against float64
};

LrmErrors lrm_weight_errors(c10::Device device) {
  LrmErrors worst;
  std::uint64_t seed = 930;
  for (const LrmCase& k : kLrmCases) {
    auto gen = cpu_generator(seed++);
    const auto f32 = at::kFloat;
    const at::Tensor w = randn_on({k.out, k.in}, gen, f32, at::kCPU).mul(0.05);
    const at::Tensor s1 = randn_on({1}, gen, f32, at::kCPU).mul(0.2).exp();
    const at::Tensor r = k.row ? randn_on({k.out}, gen, f32, at::kCPU).mul(0.3).exp() : at::Tensor();
    const at::Tensor c = k.col ? (k.groups > 1 ? randn_on({k.groups, k.in}, gen, f32, at::kCPU)
                                               : randn_on({k.in}, gen, f32, at::kCPU)).mul(0.3).exp()
                               : at::Tensor();
    const at::Tensor R = randn_on({k.out, k.in}, gen, f32, at::kCPU).to(at::kBFloat16).to(f32);  // dL/dW_eff
    auto leaf = [&](const at::Tensor& t) { return t.defined() ? t.clone().to(device).requires_grad_(true) : t; };
    const at::Tensor wd = leaf(w), rd = leaf(k.scalar ? s1 : r), cd = leaf(c);
    const at::Tensor row = k.scalar ? rd.expand({k.out}) : rd;  // as LrmLinear::Group::row_scale
    at::Tensor e;
    {
      gpt2::AutocastScope autocast(device, gpt2::Precision::bf16);
      if (device.is_cuda()) {
        require_side(gpt2::lrm_weight_fused(wd, row, cd, gpt2::KernelPath::fused), "the W_eff kernel did not run");
        e = gpt2::lrm_effective_weight_bf16(wd, row, cd);
        at::NoGradGuard no_grad;  // the ATen products, cast as autocast would: the same roundings, bit for bit
        const double apart = e.to(f32).sub(gpt2::lrm_effective_weight(wd, row, cd).to(at::kBFloat16).to(f32))
                                 .abs().max().item<double>();
        require_side(apart == 0.0, "W_eff kernel vs ATen's products + cast on " + device.str() + ": " +
                                       std::to_string(apart) + " apart");
      } else {
        e = gpt2::lrm_effective_weight(wd, row, cd).to(at::kBFloat16);
      }
    }
    require_side(e.scalar_type() == at::kBFloat16, "W_eff is not bf16");
    e.to(f32).mul(R.to(device)).sum().backward();

    const auto d64 = [](const at::Tensor& t) { return t.defined() ? t.to(at::kDouble).requires_grad_(true) : t; };
    const at::Tensor wr = d64(w), rr = d64(k.scalar ? s1 : r), cr = d64(c);
    const at::Tensor er = gpt2::lrm_effective_weight(wr, k.scalar ? rr.expand({k.out}) : rr, cr);
    er.mul(R.to(at::kDouble)).sum().backward();
    worst.bf16 = std::max(worst.bf16, test::max_rel_diff(e.to(at::kCPU, at::kDouble), er.detach()));
    worst.f32 = std::max(worst.f32, test::max_rel_diff(cpu64(wd.grad()), wr.grad()));
    if (rr.defined()) worst.f32 = std::max(worst.f32, test::max_rel_diff(cpu64(rd.grad()), rr.grad()));
    if (cr.defined()) worst.f32 = std::max(worst.f32, test::max_rel_diff(cpu64(cd.grad()), cr.grad()));
  }
  return worst;
}

// float32 products and sums of <= 1536 terms against float64: ~1e-6 relative; a wrong group, row or column O(1).
constexpr double kLrmF32Tol = 1e-4;
// W_eff rounded to bf16 once: half an ulp, at most 2^-8 of an entry.
constexpr double kLrmBf16Tol = 4e-3;

double lrm_weight_f32_error(c10::Device device) { return lrm_weight_errors(device).f32; }
double lrm_weight_bf16_error(c10::Device device) { return lrm_weight_errors(device).bf16; }

// float32 sums of <= 6144 terms (and of 5000 rows for dγ, dβ), against float64 and ATen's (Welford) order: ~1e-6.
constexpr double kNormF32Tol = 1e-4;
// y and the branch's gradient are rounded to bf16: against float64 half an ulp, at most 2^-8 of an entry; between
// the fused path and ATen's on the card, two roundings of float32 values a few ulps apart, which can land one bf16
// ulp (2^-7 of an entry at most) apart. A wrong row, column or γ errs by O(1).
constexpr double kNormBf16Tol = 8e-3;

double add_layer_norm_f32_error(c10::Device device) { return add_layer_norm_errors(device).f32; }
double add_layer_norm_bf16_error(c10::Device device) { return add_layer_norm_errors(device).bf16; }

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> kernel_rows() {
  using namespace GAUGELAB_TU;
  return {
      {"gpt2::lm_head_loss, bf16 (the fused CUDA kernel on CUDA; ATen's passes on the CPU)",
       "float64 linear + cross_entropy on the same bf16-rounded inputs (and, on CUDA, the ATen passes)",
       "x [300, 64], W [1024 padded, 64], vocab 1001, 7 targets ignored, chunks of 128 rows; loss and dL/dx, dL/dW "
       "(max-abs, relative)",
       "bf16 autocast vs float64", kBf16LossTol,
       "bf16 logits (2^-9 relative) move the softmax by ~0.6 %, the bf16 gradient is rounded once more; on CUDA the "
       "kernel must also match the ATen passes to 4e-3 (one bf16 ulp on a few entries)",
       &lm_head_ce_error},
      {"gpt2::add_layer_norm, bf16 autocast: float32 outputs (the fused CUDA kernels on CUDA; ATen on the CPU)",
       "float64 add + layer_norm on the same inputs (and, on CUDA, ATen's add + layer_norm)",
       "x [1037, 200] float32 with branch bf16 or none, bias or none; [5000, 64], [40, 2000], [8, 6144] with both; "
       "sum, dL/dx, dL/dγ, dL/dβ (max-abs, relative)",
       "float32 vs float64", kNormF32Tol, "float32 sums over <= 6144 columns and <= 5000 rows", &add_layer_norm_f32_error},
      {"gpt2::add_layer_norm, bf16 autocast: bf16 outputs (the fused CUDA kernels on CUDA; ATen on the CPU)",
       "float64 add + layer_norm on the same inputs (and, on CUDA, ATen's add + layer_norm)",
       "as the row above; y and dL/dbranch (max-abs, relative)", "bf16 vs float64", kNormBf16Tol,
       "y and the branch's gradient are rounded to bf16: half an ulp (<= 2^-8) against float64, one ulp (<= 2^-7) "
       "between two roundings on the card",
       &add_layer_norm_bf16_error},
      {"gpt2::lrm_effective_weight_bf16: gradients (the W_eff CUDA kernels on CUDA; ATen's products on the CPU)",
       "float64 lrm_effective_weight (diag(r)·W̄·diag(c_g)) and its autograd on the same inputs",
       "W̄ [96, 200] with r and c [3, 200], c [200], r alone, c alone, the scalar s; W̄ [768, 40]; W̄ [4608, 8] with c "
       "[3, 8]; dL/dW̄, dL/dr, dL/dc (max-abs, relative)",
       "float32 vs float64", kLrmF32Tol, "float32 products and sums of <= 1536 terms", &lrm_weight_f32_error},
      {"gpt2::lrm_effective_weight_bf16: W_eff (the kernel on CUDA, bit for bit ATen's products + cast there)",
       "float64 lrm_effective_weight on the same inputs", "as the row above; W_eff (max-abs, relative)",
       "bf16 vs float64", kLrmBf16Tol, "W_eff is rounded to bf16 once: half an ulp (<= 2^-8 of an entry)",
       &lrm_weight_bf16_error},
  };
}

}  // namespace gaugelab::parity
