#include "gpt2/model/residual_layer_norm.hpp"

#include <stdexcept>
#include <string>

#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/runtime.hpp"

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>

#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#endif

namespace gaugelab::gpt2 {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_launch(int rc, const char* which) {
  if (rc != 0)
    throw std::runtime_error(std::string("add_layer_norm: the fused ") + which + " kernel failed (CUDA error " +
                             std::to_string(rc) + ")");
}

// Saved for the backward: the sum (or x), mean and rstd per row, γ. Outputs {sum, y}, or {y} without a branch.
struct AddLayerNormFused : public torch::autograd::Function<AddLayerNormFused> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& branch,
                               const at::Tensor& gamma, const at::Tensor& beta, double eps) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);  // dtypes are chosen here
    const std::int64_t d = x.size(-1), rows = x.numel() / d;
    const at::Tensor xc = x.contiguous(), g = gamma.contiguous();              // [rows, d] float32, [d]
    const at::Tensor bc = branch.defined() ? branch.contiguous() : at::Tensor();  // [rows, d] bf16
    const at::Tensor be = beta.defined() ? beta.contiguous() : at::Tensor();      // [d]
    at::Tensor sum = branch.defined() ? at::empty_like(xc) : xc;
    at::Tensor y = at::empty(x.sizes(), x.options().dtype(at::kBFloat16));
    at::Tensor mean = at::empty({rows}, x.options()), rstd = at::empty({rows}, x.options());
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
    check_launch(cuda::residual_layer_norm_forward(
                     xc.data_ptr<float>(), bc.defined() ? bc.data_ptr() : nullptr, g.data_ptr<float>(),
                     be.defined() ? be.data_ptr<float>() : nullptr, bc.defined() ? sum.data_ptr<float>() : nullptr,
                     y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(), rows, d, static_cast<float>(eps),
                     at::cuda::getCurrentCUDAStream().stream()),
                 "forward");
#else
    (void)eps;
    throw std::logic_error("add_layer_norm: the fused kernel is not built");
#endif
    ctx->save_for_backward({sum, mean, rstd, g});
    ctx->saved_data["branch"] = branch.defined();
    ctx->saved_data["beta"] = beta.defined();
    if (branch.defined()) return {sum, y};
    return {y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& s = saved[0];  // [rows, d] (viewed as x's shape) float32
    const bool has_branch = ctx->saved_data["branch"].toBool(), has_beta = ctx->saved_data["beta"].toBool();
    const std::int64_t d = s.size(-1), rows = s.numel() / d;
    const at::Tensor ds = has_branch && grad_out[0].defined() ? grad_out[0].to(at::kFloat).contiguous() : at::Tensor();
    const at::Tensor& dy_in = grad_out.back();
    if (!dy_in.defined()) {  // y unused: only the stream's gradient passes through
      const at::Tensor dx = ds.defined() ? ds : at::Tensor();
      return {dx, has_branch && dx.defined() ? dx.to(at::kBFloat16) : at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor()};
    }
    const at::Tensor dy = dy_in.to(at::kBFloat16).contiguous();  // [rows, d]
    at::Tensor dx = at::empty(s.sizes(), s.options());
    at::Tensor dxb = has_branch ? at::empty(s.sizes(), s.options().dtype(at::kBFloat16)) : at::Tensor();
    at::Tensor dgamma = at::empty({d}, s.options()), dbeta = has_beta ? at::empty({d}, s.options()) : at::Tensor();
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
    at::Tensor scratch = at::empty({cuda::residual_layer_norm_scratch_floats(rows, d)}, s.options());
    check_launch(cuda::residual_layer_norm_backward(
                     s.data_ptr<float>(), saved[1].data_ptr<float>(), saved[2].data_ptr<float>(), dy.data_ptr(),
                     ds.defined() ? ds.data_ptr<float>() : nullptr, saved[3].data_ptr<float>(), dx.data_ptr<float>(),
                     has_branch ? dxb.data_ptr() : nullptr, dgamma.data_ptr<float>(),
                     has_beta ? dbeta.data_ptr<float>() : nullptr, scratch.data_ptr<float>(), rows, d,
                     at::cuda::getCurrentCUDAStream().stream()),
                 "backward");
#else
    throw std::logic_error("add_layer_norm: the fused kernel is not built");
#endif
    return {dx, dxb, dgamma, dbeta, at::Tensor()};
  }
};

}  // namespace

bool add_layer_norm_fused(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma,
                          const at::Tensor& beta, KernelPath path) {
  if (!fused_kernel_runs(path, x.device(), autocast_compute_dtype(x.device()))) return false;
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  const std::int64_t d = x.dim() > 0 ? x.size(-1) : 0;
  return x.scalar_type() == at::kFloat && x.numel() > 0 && d <= cuda::kResidualLayerNormMaxCols &&
         gamma.defined() && gamma.scalar_type() == at::kFloat && gamma.numel() == d && gamma.device() == x.device() &&
         (!beta.defined() || (beta.scalar_type() == at::kFloat && beta.numel() == d)) &&
         (!branch.defined() || (branch.scalar_type() == at::kBFloat16 && branch.sizes() == x.sizes()));
#else
  (void)branch, (void)gamma, (void)beta;
  return false;
#endif
}

AddNorm add_layer_norm(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma, const at::Tensor& beta,
                       double eps, KernelPath path) {
  if (add_layer_norm_fused(x, branch, gamma, beta, path)) {
    const variable_list out = AddLayerNormFused::apply(x, branch, gamma, beta, eps);
    return branch.defined() ? AddNorm{out[0], out[1]} : AddNorm{x, out[0]};
  }
  const at::Tensor sum = branch.defined() ? x.add(branch) : x;
  return {sum, at::layer_norm(sum, {x.size(-1)}, gamma, beta, eps)};
}

}  // namespace gaugelab::gpt2
