// Our own CUDA kernels (gpt2/model/cuda/) in the table. The LM head's fused cross-entropy has no core
// counterpart (the core holds the gauge math, not the loss): its reference is the loss's definition in
// float64, linear + log-softmax over the real vocabulary, on the same bf16-rounded inputs. On the CPU the
// row runs the ATen passes (the kernel's own reference, lm_head_loss.cpp); on CUDA the fused kernel, which
// must also agree with those passes run on the same device.
#include <algorithm>
#include <cmath>
#include <string>

#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/runtime.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"

namespace gaugelab::parity {

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
                      gpt2::LmHeadKernel kernel) {
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
  const gpt2::LmHeadKernel kernel = gpt2::LmHeadKernel::fused;
  if (device.is_cuda())
    require_side(gpt2::lm_head_fused_kernel_built(),
                 "the fused cross-entropy kernel is not built (no CUDA compiler when CMake ran)");
  const LossAndGrads ours = run_loss(x, w, t, device, kernel);

  const at::Tensor xr = x.to(at::kDouble).requires_grad_(true), wr = w.to(at::kDouble).requires_grad_(true);
  const at::Tensor ref = at::cross_entropy_loss(at::linear(xr, wr).narrow(1, 0, kVocab), t, {}, at::Reduction::Mean, -1);
  ref.mul(2.0).backward();
  require_side(wr.grad().narrow(0, kVocab, kPadded - kVocab).abs().max().item<double>() == 0.0, "reference padding");
  require_side(ours.gw.narrow(0, kVocab, kPadded - kVocab).abs().max().item<double>() == 0.0,
               "the padded vocabulary rows of dL/dW are not zero");
  if (device.is_cuda()) {  // the kernel against the passes it replaces, on the same card
    const LossAndGrads aten = run_loss(x, w, t, device, gpt2::LmHeadKernel::aten);
    const double apart = std::max({std::abs(ours.loss - aten.loss) / std::abs(aten.loss),
                                   test::max_rel_diff(ours.gx, aten.gx), test::max_rel_diff(ours.gw, aten.gw)});
    require_side(apart <= kFusedVsAtenTol, "fused kernel vs ATen passes on " + device.str() + ": " +
                                               std::to_string(apart) + " > " + std::to_string(kFusedVsAtenTol));
  }
  return std::max({std::abs(ours.loss - ref.item<double>()) / std::abs(ref.item<double>()),
                   test::max_rel_diff(ours.gx, xr.grad()), test::max_rel_diff(ours.gw, wr.grad())});
}

}  // namespace

std::vector<ParityRow> kernel_rows() {
  return {
      {"gpt2::lm_head_loss, bf16 (the fused CUDA kernel on CUDA; ATen's passes on the CPU)",
       "float64 linear + cross_entropy on the same bf16-rounded inputs (and, on CUDA, the ATen passes)",
       "x [300, 64], W [1024 padded, 64], vocab 1001, 7 targets ignored, chunks of 128 rows; loss and dL/dx, dL/dW "
       "(max-abs, relative)",
       "bf16 autocast vs float64", kBf16LossTol,
       "bf16 logits (2^-9 relative) move the softmax by ~0.6 %, the bf16 gradient is rounded once more; on CUDA the "
       "kernel must also match the ATen passes to 4e-3 (one bf16 ulp on a few entries)",
       &lm_head_ce_error},
  };
}

}  // namespace gaugelab::parity
