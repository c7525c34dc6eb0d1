#include "gpt2/model/lrm_weight_bf16.hpp"

#include <stdexcept>
#include <string>

#include <ATen/ops/empty.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/kernel_launch.hpp"
#include "gpt2/model/runtime.hpp"

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#endif

namespace gaugelab::gpt2 {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// c as [G, in] (a single column scale is one group).
std::int64_t groups_of(const at::Tensor& c) { return c.defined() && c.dim() == 2 ? c.size(0) : 1; }

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#endif

// Every tensor argument is defined (autograd records each input's device): an absent r or c travels as an empty
// placeholder with its flag, and gets no gradient.
struct LrmWeightBf16 : public torch::autograd::Function<LrmWeightBf16> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& w, const at::Tensor& r, const at::Tensor& c,
                            bool has_r, bool has_c, const LrmWeightKernels* k) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const at::Tensor wc = w.contiguous();                          // [out, in]
    const at::Tensor rc = has_r ? r.contiguous() : at::Tensor();  // [out] (an expanded s materialised)
    const at::Tensor cc = has_c ? c.contiguous() : at::Tensor();  // [in] or [G, in]
    const std::int64_t out = w.size(0), in = w.size(1), groups = groups_of(cc);
    at::Tensor e = at::empty({out, in}, w.options().dtype(at::kBFloat16));
    const LaunchGuard device = launch_guard(w);
    check_launch(k->forward(wc.data_ptr<float>(), has_r ? rc.data_ptr<float>() : nullptr,
                            has_c ? cc.data_ptr<float>() : nullptr, e.data_ptr(), out, in, groups, launch_stream(w)),
                 "lrm_effective_weight_bf16: the forward kernel (lrm_weight_forward)",
                 {{"out", out}, {"in", in}, {"groups", groups}});
    ctx->save_for_backward({wc, has_r ? rc : wc, has_c ? cc : wc});  // wc stands in for an absent one
    ctx->saved_data["r"] = has_r;
    ctx->saved_data["c"] = has_c;
    ctx->saved_data["kernels"] = reinterpret_cast<std::int64_t>(k);
    return e;
  }

  // Gradients for (w, r, c, has_r, has_c, kernels).
  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const variable_list saved = ctx->get_saved_variables();
    const bool has_r = ctx->saved_data["r"].toBool(), has_c = ctx->saved_data["c"].toBool();
    const at::Tensor& w = saved[0];
    const at::Tensor r = has_r ? saved[1] : at::Tensor(), c = has_c ? saved[2] : at::Tensor();
    if (!grad_out[0].defined())
      return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    const at::Tensor g = grad_out[0].to(at::kBFloat16).contiguous();  // [out, in] (bf16 from the matmul already)
    const std::int64_t out = w.size(0), in = w.size(1), groups = groups_of(c);
    at::Tensor dw = at::empty_like(w);
    at::Tensor dr = has_r ? at::empty_like(r) : at::Tensor();
    at::Tensor dc = has_c ? at::empty_like(c) : at::Tensor();
    const auto* k = reinterpret_cast<const LrmWeightKernels*>(ctx->saved_data["kernels"].toInt());
    const LaunchGuard device = launch_guard(w);
    at::Tensor scratch = has_c ? at::empty({k->scratch_floats(out, in, groups)}, w.options()) : at::Tensor();
    check_launch(k->backward(g.data_ptr(), w.data_ptr<float>(), has_r ? r.data_ptr<float>() : nullptr,
                             has_c ? c.data_ptr<float>() : nullptr, dw.data_ptr<float>(),
                             has_r ? dr.data_ptr<float>() : nullptr, has_c ? dc.data_ptr<float>() : nullptr,
                             has_c ? scratch.data_ptr<float>() : nullptr, out, in, groups, launch_stream(w)),
                 "lrm_effective_weight_bf16: the backward kernel (lrm_weight_backward)",
                 {{"out", out}, {"in", in}, {"groups", groups}});
    return {dw, dr, dc, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool lrm_weight_fused(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c, KernelPath path) {
  if (!w.defined() || !fused_kernel_runs(path, w.device(), autocast_compute_dtype(w.device()))) return false;
  if (!r.defined() && !c.defined()) return false;
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  if (w.dim() != 2 || w.scalar_type() != at::kFloat || w.numel() == 0 || w.size(1) > cuda::kLrmWeightMaxIn)
    return false;
  const std::int64_t out = w.size(0), in = w.size(1);
  const bool r_ok = !r.defined() || (r.dim() == 1 && r.size(0) == out && r.scalar_type() == at::kFloat &&
                                      r.device() == w.device());
  const bool c_ok = !c.defined() || (c.scalar_type() == at::kFloat && c.device() == w.device() &&
                                     ((c.dim() == 1 && c.size(0) == in) ||
                                      (c.dim() == 2 && c.size(1) == in && c.size(0) >= 1 && out % c.size(0) == 0)));
  return r_ok && c_ok;
#else
  return false;
#endif
}

at::Tensor lrm_effective_weight_with(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c,
                                     const LrmWeightKernels& kernels) {
  const at::Tensor none = at::empty({0}, w.options());  // the placeholder of an absent r or c
  return LrmWeightBf16::apply(w, r.defined() ? r : none, c.defined() ? c : none, r.defined(), c.defined(), &kernels);
}

at::Tensor lrm_effective_weight_bf16(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c) {
  if (!lrm_weight_fused(w, r, c, KernelPath::fused))
    throw std::logic_error("lrm_effective_weight_bf16: these operands do not take the kernels (lrm_weight_fused)");
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  return lrm_effective_weight_with(w, r, c, cuda_kernel_table().lrm_weight);  // loads the CUDA half
#else
  throw std::logic_error("lrm_effective_weight_bf16: the kernels are not built");
#endif
}

}  // namespace gaugelab::gpt2
