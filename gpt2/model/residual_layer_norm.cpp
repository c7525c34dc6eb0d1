#include "gpt2/model/residual_layer_norm.hpp"

#include <stdexcept>
#include <string>

#include <ATen/ops/empty.h>
#include <ATen/ops/layer_norm.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/kernel_launch.hpp"
#include "gpt2/model/runtime.hpp"

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#endif

namespace gaugelab::gpt2 {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#endif

// Saved for the backward: the sum (or x), mean and rstd per row, γ. Outputs {sum, y}, or {y} without a branch.
// Every tensor argument is defined (autograd records each input's device): an absent branch or β travels as an
// empty placeholder with its flag, and gets no gradient.
struct AddLayerNormFused : public torch::autograd::Function<AddLayerNormFused> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& branch,
                               const at::Tensor& gamma, const at::Tensor& beta, double eps, bool has_branch,
                               bool has_beta, const AddLayerNormKernels* k) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);  // dtypes are chosen here
    ctx->set_materialize_grads(false);  // an unused output (ln_f's sum) sends no gradient: nothing to read
    const std::int64_t d = x.size(-1), rows = x.numel() / d;
    const at::Tensor xc = x.contiguous(), g = gamma.contiguous();           // [rows, d] float32, [d]
    const at::Tensor bc = has_branch ? branch.contiguous() : at::Tensor();  // [rows, d] bf16
    const at::Tensor be = has_beta ? beta.contiguous() : at::Tensor();      // [d]
    at::Tensor sum = has_branch ? at::empty_like(xc) : xc;
    at::Tensor y = at::empty(x.sizes(), x.options().dtype(at::kBFloat16));
    at::Tensor mean = at::empty({rows}, x.options()), rstd = at::empty({rows}, x.options());
    const LaunchGuard device = launch_guard(x);
    check_launch(k->forward(xc.data_ptr<float>(), has_branch ? bc.data_ptr() : nullptr, g.data_ptr<float>(),
                            has_beta ? be.data_ptr<float>() : nullptr, has_branch ? sum.data_ptr<float>() : nullptr,
                            y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(), rows, d,
                            static_cast<float>(eps), launch_stream(x)),
                 "add_layer_norm: the fused forward kernel (residual_layer_norm_forward)", {{"rows", rows}, {"cols", d}});
    ctx->save_for_backward({sum, mean, rstd, g});
    ctx->saved_data["branch"] = has_branch;
    ctx->saved_data["beta"] = has_beta;
    ctx->saved_data["kernels"] = reinterpret_cast<std::int64_t>(k);
    if (has_branch) return {sum, y};
    return {y};
  }

  // Gradients for (x, branch, gamma, beta, eps, has_branch, has_beta, kernels).
  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& s = saved[0];  // [rows, d] (viewed as x's shape) float32
    const bool has_branch = ctx->saved_data["branch"].toBool(), has_beta = ctx->saved_data["beta"].toBool();
    const std::int64_t d = s.size(-1), rows = s.numel() / d;
    const at::Tensor ds = has_branch && grad_out[0].defined() ? grad_out[0].to(at::kFloat).contiguous() : at::Tensor();
    const at::Tensor& dy_in = grad_out.back();
    if (!dy_in.defined()) {  // y unused: only the stream's gradient passes through
      return {ds, has_branch && ds.defined() ? ds.to(at::kBFloat16) : at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    }
    const at::Tensor dy = dy_in.to(at::kBFloat16).contiguous();  // [rows, d]
    at::Tensor dx = at::empty(s.sizes(), s.options());
    at::Tensor dxb = has_branch ? at::empty(s.sizes(), s.options().dtype(at::kBFloat16)) : at::Tensor();
    at::Tensor dgamma = at::empty({d}, s.options()), dbeta = has_beta ? at::empty({d}, s.options()) : at::Tensor();
    const auto* k = reinterpret_cast<const AddLayerNormKernels*>(ctx->saved_data["kernels"].toInt());
    const LaunchGuard device = launch_guard(s);
    at::Tensor scratch = at::empty({k->scratch_floats(rows, d)}, s.options());
    check_launch(k->backward(s.data_ptr<float>(), saved[1].data_ptr<float>(), saved[2].data_ptr<float>(), dy.data_ptr(),
                             ds.defined() ? ds.data_ptr<float>() : nullptr, saved[3].data_ptr<float>(),
                             dx.data_ptr<float>(), has_branch ? dxb.data_ptr() : nullptr, dgamma.data_ptr<float>(),
                             has_beta ? dbeta.data_ptr<float>() : nullptr, scratch.data_ptr<float>(), rows, d,
                             launch_stream(s)),
                 "add_layer_norm: the fused backward kernel (residual_layer_norm_backward)",
                 {{"rows", rows}, {"cols", d}});
    return {dx, dxb, dgamma, dbeta, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
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
         (!beta.defined() ||
          (beta.scalar_type() == at::kFloat && beta.numel() == d && beta.device() == x.device())) &&
         (!branch.defined() || (branch.scalar_type() == at::kBFloat16 && branch.sizes() == x.sizes() &&
                                branch.device() == x.device()));
#else
  (void)branch, (void)gamma, (void)beta;
  return false;
#endif
}

AddNorm add_layer_norm_with(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma,
                            const at::Tensor& beta, double eps, const AddLayerNormKernels& kernels) {
  const at::Tensor none = at::empty({0}, x.options());  // the placeholder of an absent branch or β
  const variable_list out = AddLayerNormFused::apply(x, branch.defined() ? branch : none, gamma,
                                                     beta.defined() ? beta : none, eps, branch.defined(),
                                                     beta.defined(), &kernels);
  return branch.defined() ? AddNorm{out[0], out[1]} : AddNorm{x, out[0]};
}

AddNorm add_layer_norm(const at::Tensor& x, const at::Tensor& branch, const at::Tensor& gamma, const at::Tensor& beta,
                       double eps, KernelPath path) {
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  if (add_layer_norm_fused(x, branch, gamma, beta, path)) return add_layer_norm_with(x, branch, gamma, beta, eps, cuda_kernel_table().add_layer_norm);
#endif
  const at::Tensor sum = branch.defined() ? x.add(branch) : x;
  return {sum, at::layer_norm(sum, {x.size(-1)}, gamma, beta, eps)};
}

}  // namespace gaugelab::gpt2
