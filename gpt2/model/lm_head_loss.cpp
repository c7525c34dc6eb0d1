#include "gpt2/model/lm_head_loss.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/bf16_round.hpp"
#include "gpt2/model/kernel_launch.hpp"
#include "gpt2/model/runtime.hpp"

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#include "gpt2/model/cuda/lm_head_ce_kernel.hpp"
#endif

namespace gaugelab::gpt2 {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// [rows, cols] view of a workspace buffer, grown (never shrunk) to at least rows × cols.
at::Tensor workspace_view(at::Tensor& buf, std::int64_t rows, std::int64_t cols, const at::TensorOptions& opt) {
  if (!buf.defined() || buf.numel() < rows * cols || buf.scalar_type() != opt.dtype().toScalarType() ||
      buf.device() != opt.device())
    buf = at::empty({rows * cols}, opt);
  return buf.narrow(0, 0, rows * cols).view({rows, cols});
}

// The fused kernel on a [rows, padded] bf16 chunk (contiguous rows): returns lse − picked per row and, when
// grad, leaves (softmax − onehot)·scale in the chunk.
at::Tensor fused_ce_rows(at::Tensor& logits, std::int64_t vocab, const at::Tensor& targets, const at::Tensor& scale,
                         bool grad) {
  at::Tensor row_loss = at::empty({logits.size(0)}, logits.options().dtype(at::kFloat));
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  const at::Tensor sc = scale.contiguous();
  const LaunchGuard device = launch_guard(logits);
  check_launch(cuda_kernel_table().lm_head_ce_rows_bf16(logits.data_ptr(), logits.size(0), vocab, logits.stride(0),
                                                            targets.data_ptr<std::int64_t>(), sc.data_ptr<float>(),
                                                            row_loss.data_ptr<float>(), grad, launch_stream(logits)),
               "lm_head_loss: the fused cross-entropy kernel (lm_head_ce_rows_bf16)",
               {{"rows", logits.size(0)}, {"vocab", vocab}, {"ld", logits.stride(0)}});
#else
  (void)vocab, (void)targets, (void)scale, (void)grad;
  throw std::logic_error("lm_head_loss: the fused kernel is not built");
#endif
  return row_loss;
}

// dL/dW += Gᵀ·X for one chunk: G [rows, padded] the chunk's gradient of the logits, X [rows, d] its inputs, gw
// [padded, d] (undefined before the first chunk). In float32 the product accumulates in place, as ever. In bf16 each
// chunk's product is rounded once and the sum is kept in float32: a bf16 running sum rounds the total at every
// chunk (a fitted micro-batch has 40-60 chunks of 4096 rows) and stops growing once a chunk's share falls below
// half its ulp. Emulated bf16 (`emulate`, float32 operands holding bf16 values) rounds each chunk's product as bf16's.
void add_weight_grad(at::Tensor& gw, const at::Tensor& g, const at::Tensor& x, bool emulate) {
  if (!at::isReducedFloatingType(g.scalar_type()) && !emulate) {
    if (!gw.defined()) gw = at::mm(g.t(), x);
    else gw.addmm_(g.t(), x);
    return;
  }
  at::Tensor part = at::mm(g.t(), x);  // [padded, d] in the compute dtype
  if (emulate) round_to_bf16_(part);
  if (!gw.defined()) gw = part.to(at::kFloat);
  else gw.add_(part);  // float32 += bf16, in float32
}

// Forward computes the loss and, if asked, both gradients (see the header); backward scales them. With `emulate`
// (emulated bf16, cd float32) every product's operands and output are rounded to bf16 where the bf16 path's are.
struct LmHeadCrossEntropy : public torch::autograd::Function<LmHeadCrossEntropy> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w, const at::Tensor& targets,
                            std::int64_t vocab, bool need_grad, at::ScalarType cd, bool emulate, LmHeadWorkspace* ws) {
    // Dtypes are chosen here explicitly; autocast must not recast the out= products.
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const std::int64_t n = x.size(0), padded = w.size(0), chunk = std::max<std::int64_t>(1, ws->chunk_rows);
    const at::Tensor xc = emulate ? round_to_bf16(x) : x.to(cd);  // [n, d]
    const at::Tensor wc = emulate ? round_to_bf16(w) : w.to(cd);  // [padded, d]
    const at::Tensor valid = targets.ne(-1).to(at::kFloat);                  // [n]
    const at::Tensor safe_t = targets.clamp_min(0).unsqueeze(1);             // [n, 1]
    const at::Tensor count = valid.sum();                                    // n_valid (0 gives NaN, as torch)
    const at::Tensor scale = valid.div(count);                               // [n]: 1/n_valid or 0 (ignored)
    at::Tensor loss_sum = at::zeros({}, x.options().dtype(at::kFloat));
    at::Tensor gx, gw;
    if (need_grad) gx = at::empty({n, x.size(1)}, x.options().dtype(cd));
    const auto opt = x.options().dtype(cd);
    const bool fused = fused_kernel_runs(ws->kernel, x.device(), cd);
    const at::Tensor targets_c = fused ? targets.contiguous() : at::Tensor();  // [n] int64
    for (std::int64_t r0 = 0; r0 < n; r0 += chunk) {
      const std::int64_t rows = std::min(chunk, n - r0);
      const at::Tensor xr = xc.narrow(0, r0, rows);
      at::Tensor logits = workspace_view(ws->logits, rows, padded, opt);  // [rows, padded]
      at::mm_out(logits, xr, wc.t());
      if (emulate) round_to_bf16_(logits);
      if (fused) {  // the rows' loss, and their gradient in place of the logits, in one kernel
        const at::Tensor row_loss = fused_ce_rows(logits, vocab, targets_c.narrow(0, r0, rows),
                                                  scale.narrow(0, r0, rows), need_grad);  // [rows] float32
        loss_sum.add_(row_loss.mul(valid.narrow(0, r0, rows)).sum());
        if (!need_grad) continue;
        at::Tensor gx_rows = gx.narrow(0, r0, rows);
        at::mm_out(gx_rows, logits, wc);
        add_weight_grad(gw, logits, xr, false);
        continue;
      }
      if (padded > vocab) logits.narrow(1, vocab, padded - vocab).fill_(-std::numeric_limits<float>::infinity());
      // logsumexp by hand, in place (at::logsumexp allocates a [rows, padded] temporary):
      // m = max, e = exp(logit − m) in float32, lse = m + log Σe; then e·(scale/Σe) is softmax/n_valid, reusing e.
      const at::Tensor tr = safe_t.narrow(0, r0, rows), sr = scale.narrow(0, r0, rows).unsqueeze(1);
      const at::Tensor picked = logits.gather(1, tr).to(at::kFloat);      // [rows, 1]
      const at::Tensor mx = logits.amax({1}, /*keepdim=*/true).to(at::kFloat);  // [rows, 1]
      at::Tensor lf = cd == at::kFloat
                          ? logits
                          : workspace_view(ws->logits_f32, rows, padded, opt.dtype(at::kFloat)).copy_(logits);
      lf.sub_(mx).exp_();  // (a mixed-dtype sub_out would save a pass but runs 5x slower on the CPU)
      const at::Tensor sum = lf.sum({1}, /*keepdim=*/true);                // [rows, 1]
      const at::Tensor lse = sum.log().add_(mx);
      loss_sum.add_(lse.sub(picked).mul(valid.narrow(0, r0, rows).unsqueeze(1)).sum());
      if (!need_grad) continue;
      lf.mul_(sr.div(sum));              // softmax / n_valid (0 on ignored rows)
      lf.scatter_add_(1, tr, sr.neg());  // − onehot / n_valid
      if (emulate) round_to_bf16_(lf);
      const at::Tensor g = cd == at::kFloat ? lf : logits.copy_(lf);
      at::Tensor gx_rows = gx.narrow(0, r0, rows);
      at::mm_out(gx_rows, g, wc);  // dL/dx rows = G·W
      if (emulate) round_to_bf16_(gx_rows);
      add_weight_grad(gw, g, xr, emulate);  // dL/dW = Gᵀ·X, summed over chunks
    }
    if (need_grad) {
      ctx->saved_data["gx"] = gx.to(x.scalar_type());
      ctx->saved_data["gw"] = gw.to(w.scalar_type());  // float32 (the summed chunks') for float32 weights
    }
    return loss_sum.div(count);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const at::Tensor go = grad_out[0];
    at::Tensor gx = ctx->saved_data["gx"].toTensor(), gw = ctx->saved_data["gw"].toTensor();
    // On CUDA the scaling is always done: asking whether go is 1 would wait for the device in mid-backward.
    if (go.is_cuda() || !(go.numel() == 1 && go.item<double>() == 1.0)) gx = gx.mul(go), gw = gw.mul(go);
    return {gx, gw, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor lm_head_logits(const at::Tensor& x, const at::Tensor& w, std::int64_t vocab) {
  at::Tensor logits = emulate_bf16(at::linear(emulate_bf16(x), emulate_bf16(w)));  // [B, T, padded]
  if (logits.size(-1) != vocab) logits = logits.narrow(-1, 0, vocab);
  return logits.to(at::kFloat);
}

at::Tensor lm_head_loss(const at::Tensor& x, const at::Tensor& w, const at::Tensor& targets, std::int64_t vocab,
                        LmHeadWorkspace& ws) {
  const bool need_grad = at::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad());
  const at::ScalarType cd = autocast_compute_dtype(x.device());
  return LmHeadCrossEntropy::apply(x.reshape({-1, x.size(-1)}), w, targets.reshape({-1}), vocab, need_grad, cd,
                                   bf16_emulation_enabled(), &ws);
}

}  // namespace gaugelab::gpt2
