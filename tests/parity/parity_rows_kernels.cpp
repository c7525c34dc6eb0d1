// Our own CUDA kernels (gpt2/model/cuda/) in the table. The LM head's fused cross-entropy has no core
// counterpart (the core holds the gauge math, not the loss): its reference is the loss's definition in
// float64, linear + log-softmax over the real vocabulary, on the same bf16-rounded inputs. On the CPU the
// row runs the ATen passes (the kernel's own reference, lm_head_loss.cpp); on CUDA the fused kernel, which
// must also agree with those passes run on the same device. The residual add + LayerNorm kernel's reference
// is the same formula in float64 on the same inputs; on CUDA it must also agree with ATen's add and
// layer_norm on the card. On CUDA every row runs its kernels' forward and backward twice and requires the same
// bits (the kernels reduce in a fixed order: a resumed run repeats bit for bit). The rows at GPT-2 124M's width
// run on CUDA only. The multipliers' W_eff kernel has its rows in parity_rows_lrm_kernel.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/residual_layer_norm.hpp"
#include "gpt2/model/runtime.hpp"
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
  if (device.is_cuda()) {
    // A rerun: the same bits (the kernel's per-row reductions and the chunks' matmuls in a fixed order).
    const LossAndGrads again = run_loss(x, w, t, device, kernel);
    require_side(std::memcmp(&ours.loss, &again.loss, sizeof ours.loss) == 0 && test::same_bits(ours.gx, again.gx) &&
                     test::same_bits(ours.gw, again.gw),
                 "lm_head_loss on " + device.str() + ": a rerun's loss or gradients differ in their bits");
    // The kernel against the passes it replaces, on the same card.
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
// One case: rows × dim, with a bf16 branch or none, a bias or none, and the sum's gradient used (a block's
// LayerNorm: the stream goes on) or absent (ln_f: nothing reads the final sum, so no gradient reaches it and the
// backward gets no ds).
struct NormCase {
  std::int64_t rows, dim;
  bool branch, bias, sum_used;
};
// The backward's partitions: 1037 × 200 (d not a multiple of 32: lanes idle on the last columns; 260 blocks of 4
// warps), 5000 × 64 (the 1024-block cap: warps take several rows), 40 × 2000 (3 warps per block) and 8 × 6144 (one
// warp, the whole 48 KB of partials). Each with a branch and a bias; the first also without either (ln_1 of the
// first block; bias-free models) and as ln_f.
constexpr NormCase kNormCases[] = {{1037, 200, true, true, true},   {1037, 200, true, false, true},
                                   {1037, 200, false, true, true},  {1037, 200, false, false, true},
                                   {1037, 200, true, true, false},  {5000, 64, true, true, true},
                                   {40, 2000, true, true, true},    {8, 6144, true, true, true}};
// GPT-2 124M's width: the 4 warps × 1024 blocks of d = 768 take 4096 rows a round. A block's LayerNorm over a
// micro-batch of 12 × 1024 tokens (3 full rounds; no bias, as `gaugelab train` builds the model), a ragged last round
// with a bias, and ln_f on 12 × 1024 tokens.
constexpr NormCase kNormCases124M[] = {{12288, 768, true, false, true}, {9001, 768, true, true, true},
                                       {12288, 768, true, false, false}};
constexpr double kNormEps = 1e-5;

struct NormOut {
  at::Tensor sum, y, gx, gbranch, ggamma, gbeta;  // float64 on the CPU (gbranch, gbeta undefined if absent)
};

at::Tensor cpu64(const at::Tensor& t) { return t.defined() ? t.to(at::kCPU, at::kDouble) : at::Tensor(); }

// loss = Σ y·R (+ Σ sum·S when sum_used): R rounded to bf16, what reaches a bf16 y.
NormOut run_norm(const at::Tensor& x, const at::Tensor& br, const at::Tensor& g, const at::Tensor& b,
                 const at::Tensor& R, const at::Tensor& S, bool sum_used, c10::Device device, gpt2::KernelPath path) {
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
  if (br.defined() && sum_used) loss = loss.add(out.sum.mul(S.to(device)).sum());
  loss.backward();
  return {cpu64(out.sum), cpu64(out.y), cpu64(xd.grad()), bd.defined() ? cpu64(bd.grad()) : at::Tensor(),
          cpu64(gd.grad()), bed.defined() ? cpu64(bed.grad()) : at::Tensor()};
}

struct NormErrors {
  double f32 = 0;   // sum, dL/dx, dL/dγ, dL/dβ: float32 arithmetic in both
  double bf16 = 0;  // y, dL/dbranch: rounded to bf16 on the fused path
};

template <std::size_t N>
NormErrors add_layer_norm_errors(c10::Device device, const NormCase (&cases)[N], std::uint64_t seed) {
  NormErrors worst;
  for (const NormCase& k : cases) {
    const std::int64_t rows = k.rows, dim = k.dim;
    auto gen = cpu_generator(seed++);
    const auto f32 = at::kFloat;
    const at::Tensor x = randn_on({rows, dim}, gen, f32, at::kCPU).mul(2.0).add(0.5);
    const at::Tensor br = k.branch ? randn_on({rows, dim}, gen, f32, at::kCPU).to(at::kBFloat16) : at::Tensor();
    const at::Tensor g = randn_on({dim}, gen, f32, at::kCPU).mul(0.3).add(1.0);
    const at::Tensor b = k.bias ? randn_on({dim}, gen, f32, at::kCPU).mul(0.1) : at::Tensor();
    const at::Tensor R = randn_on({rows, dim}, gen, f32, at::kCPU).to(at::kBFloat16).to(f32);
    const at::Tensor S = randn_on({rows, dim}, gen, f32, at::kCPU);
    const NormOut ours = run_norm(x, br, g, b, R, S, k.sum_used, device, gpt2::KernelPath::fused);

    // float64 reference on the same inputs
    const auto d64 = [](const at::Tensor& t) {
      return t.defined() ? t.to(at::kDouble).requires_grad_(true) : at::Tensor();
    };
    const at::Tensor xr = d64(x), brr = d64(br), gr = d64(g), bbr = d64(b);
    const at::Tensor sr = brr.defined() ? xr.add(brr) : xr;
    const at::Tensor yr = at::layer_norm(sr, {dim}, gr, bbr, kNormEps);
    at::Tensor lr = yr.mul(R.to(at::kDouble)).sum();
    if (brr.defined() && k.sum_used) lr = lr.add(sr.mul(S.to(at::kDouble)).sum());
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
    if (device.is_cuda()) {
      const std::string where = "add_layer_norm [" + std::to_string(rows) + ", " + std::to_string(dim) + "] on " +
                                device.str() + (k.sum_used ? "" : " (ln_f's case)");
      // A rerun of the fused forward and backward: the same bits (fixed partitions and orders, no atomics).
      const NormOut again = run_norm(x, br, g, b, R, S, k.sum_used, device, gpt2::KernelPath::fused);
      for (const auto& [name, a, r] :
           {std::tuple{"sum", ours.sum, again.sum}, std::tuple{"y", ours.y, again.y}, std::tuple{"dL/dx", ours.gx, again.gx},
            std::tuple{"dL/dbranch", ours.gbranch, again.gbranch}, std::tuple{"dL/dgamma", ours.ggamma, again.ggamma},
            std::tuple{"dL/dbeta", ours.gbeta, again.gbeta}})
        require_side(test::same_bits(a, r), where + ": a rerun's " + name + " differs in its bits");
      // The kernels against the ATen ops they replace, on the same card.
      const NormOut aten = run_norm(x, br, g, b, R, S, k.sum_used, device, gpt2::KernelPath::aten);
      for (const auto& [a, r] : {std::pair{ours.sum, aten.sum}, std::pair{ours.gx, aten.gx},
                                 std::pair{ours.ggamma, aten.ggamma}, std::pair{ours.gbeta, aten.gbeta}})
        upd(worst.f32, a, r);
      upd(worst.bf16, ours.y, aten.y);
      upd(worst.bf16, ours.gbranch, aten.gbranch);
    }
  }
  return worst;
}

// float32 sums of <= 6144 terms (and of <= 12288 rows for dγ, dβ), against float64 and ATen's (Welford) order:
// ~1e-6.
constexpr double kNormF32Tol = 1e-4;
// y and the branch's gradient are rounded to bf16: against float64 half an ulp, at most 2^-8 of an entry; between
// the fused path and ATen's on the card, two roundings of float32 values a few ulps apart, which can land one bf16
// ulp (2^-7 of an entry at most) apart. A wrong row, column or γ errs by O(1).
constexpr double kNormBf16Tol = 8e-3;

double add_layer_norm_f32_error(c10::Device device) { return add_layer_norm_errors(device, kNormCases, 910).f32; }
double add_layer_norm_bf16_error(c10::Device device) { return add_layer_norm_errors(device, kNormCases, 910).bf16; }
double add_layer_norm_124m_f32_error(c10::Device device) {
  return add_layer_norm_errors(device, kNormCases124M, 940).f32;
}
double add_layer_norm_124m_bf16_error(c10::Device device) {
  return add_layer_norm_errors(device, kNormCases124M, 940).bf16;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> kernel_rows() {
  using namespace GAUGELAB_TU;
  return {
      {"gpt2::lm_head_loss, bf16 (the fused CUDA kernel on CUDA; ATen's passes on the CPU)",
       "float64 linear + cross_entropy on the same bf16-rounded inputs (and, on CUDA, the ATen passes)",
       "x [300, 64], W [1024 padded, 64], vocab 1001, 7 targets ignored, chunks of 128 rows; loss and dL/dx, dL/dW "
       "(max-abs, relative); on CUDA run twice, bit for bit",
       "bf16 autocast vs float64", kBf16LossTol,
       "bf16 logits (2^-9 relative) move the softmax by ~0.6 %, the bf16 gradient is rounded once more (dL/dW's "
       "chunks summed in float32); on CUDA the kernel must also match the ATen passes to 4e-3 (one bf16 ulp on a few "
       "entries)",
       &lm_head_ce_error},
      {"gpt2::add_layer_norm, bf16 autocast: float32 outputs (the fused CUDA kernels on CUDA; ATen on the CPU)",
       "float64 add + layer_norm on the same inputs (and, on CUDA, ATen's add + layer_norm)",
       "x [1037, 200] float32 with branch bf16 or none, bias or none, and as ln_f (the sum's gradient absent); "
       "[5000, 64], [40, 2000], [8, 6144] with both; sum, dL/dx, dL/dγ, dL/dβ (max-abs, relative); on CUDA run "
       "twice, bit for bit",
       "float32 vs float64", kNormF32Tol, "float32 sums over <= 6144 columns and <= 5000 rows", &add_layer_norm_f32_error},
      {"gpt2::add_layer_norm, bf16 autocast: bf16 outputs (the fused CUDA kernels on CUDA; ATen on the CPU)",
       "float64 add + layer_norm on the same inputs (and, on CUDA, ATen's add + layer_norm)",
       "as the row above; y and dL/dbranch (max-abs, relative)", "bf16 vs float64", kNormBf16Tol,
       "y and the branch's gradient are rounded to bf16: half an ulp (<= 2^-8) against float64, one ulp (<= 2^-7) "
       "between two roundings on the card",
       &add_layer_norm_bf16_error},
      {"gpt2::add_layer_norm at GPT-2 124M's width: float32 outputs (the fused CUDA kernels; CUDA only)",
       "float64 add + layer_norm on the same inputs, and ATen's add + layer_norm on the card",
       "x [12288, 768] with a bf16 branch, no bias (a block's LayerNorm, 12 x 1024 tokens); [9001, 768] with branch "
       "and bias (a ragged last 4096-row round of the backward); [12288, 768] as ln_f (branch, no bias, the sum's "
       "gradient absent); sum, dL/dx, dL/dγ, dL/dβ (max-abs, relative); run twice, bit for bit",
       "float32 vs float64", kNormF32Tol, "float32 sums over 768 columns and <= 12288 rows",
       &add_layer_norm_124m_f32_error, /*cuda_only=*/true},
      {"gpt2::add_layer_norm at GPT-2 124M's width: bf16 outputs (the fused CUDA kernels; CUDA only)",
       "float64 add + layer_norm on the same inputs, and ATen's add + layer_norm on the card",
       "as the row above; y and dL/dbranch (max-abs, relative)", "bf16 vs float64", kNormBf16Tol,
       "y and the branch's gradient are rounded to bf16: half an ulp (<= 2^-8) against float64, one ulp (<= 2^-7) "
       "between two roundings on the card",
       &add_layer_norm_124m_bf16_error, /*cuda_only=*/true},
  };
}

}  // namespace gaugelab::parity
