#include "gpt2/model/lrm_weight_bf16.hpp"

#include <stdexcept>
#include <string>

#include <ATen/ops/empty.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/custom_function.h>

#include "gpt2/model/runtime.hpp"

#ifdef GAUGELAB_HAVE_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>

#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#endif

namespace gaugelab::gpt2 {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_launch(int rc, const char* which) {
  if (rc != 0)
    throw std::runtime_error(std::string("lrm_effective_weight_bf16: the ") + which + " kernel failed (CUDA error " +
                             std::to_string(rc) + ")");
}

// c as [G, in] (a single column scale is one group).
std::int64_t groups_of(const at::Tensor& c) { return c.defined() && c.dim() == 2 ? c.size(0) : 1; }

struct LrmWeightBf16 : public torch::autograd::Function<LrmWeightBf16> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& w, const at::Tensor& r, const at::Tensor& c) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const at::Tensor wc = w.contiguous();                                  // [out, in]
    const at::Tensor rc = r.defined() ? r.contiguous() : at::Tensor();     // [out] (an expanded s materialised)
    const at::Tensor cc = c.defined() ? c.contiguous() : at::Tensor();     // [in] or [G, in]
    const std::int64_t out = w.size(0), in = w.size(1), groups = groups_of(c);
    at::Tensor e = at::empty({out, in}, w.options().dtype(at::kBFloat16));
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
    check_launch(cuda::lrm_weight_forward(wc.data_ptr<float>(), rc.defined() ? rc.data_ptr<float>() : nullptr,
                                          cc.defined() ? cc.data_ptr<float>() : nullptr, e.data_ptr(), out, in, groups,
                                          at::cuda::getCurrentCUDAStream().stream()),
                 "forward");
#else
    throw std::logic_error("lrm_effective_weight_bf16: the kernels are not built");
#endif
    ctx->save_for_backward({wc, rc, cc});
    return e;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &w = saved[0], &r = saved[1], &c = saved[2];
    if (!grad_out[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const at::Tensor g = grad_out[0].to(at::kBFloat16).contiguous();  // [out, in] (bf16 from the matmul already)
    const std::int64_t out = w.size(0), in = w.size(1), groups = groups_of(c);
    at::Tensor dw = at::empty_like(w);
    at::Tensor dr = r.defined() ? at::empty_like(r) : at::Tensor();
    at::Tensor dc = c.defined() ? at::empty_like(c) : at::Tensor();
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
    at::Tensor scratch = c.defined() ? at::empty({cuda::lrm_weight_scratch_floats(out, in, groups)}, w.options())
                                     : at::Tensor();
    check_launch(cuda::lrm_weight_backward(g.data_ptr(), w.data_ptr<float>(), r.defined() ? r.data_ptr<float>() : nullptr,
                                           c.defined() ? c.data_ptr<float>() : nullptr, dw.data_ptr<float>(),
                                           dr.defined() ? dr.data_ptr<float>() : nullptr,
                                           dc.defined() ? dc.data_ptr<float>() : nullptr,
                                           scratch.defined() ? scratch.data_ptr<float>() : nullptr, out, in, groups,
                                           at::cuda::getCurrentCUDAStream().stream()),
                 "backward");
#else
    throw std::logic_error("lrm_effective_weight_bf16: the kernels are not built");
#endif
    return {dw, dr, dc};
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
  const bool r_ok = !r.defined() || (r.dim() == 1 && r.size(0) == out && r.scalar_type() == at::kFloat);
  const bool c_ok = !c.defined() || (c.scalar_type() == at::kFloat &&
                                     ((c.dim() == 1 && c.size(0) == in) ||
                                      (c.dim() == 2 && c.size(1) == in && c.size(0) >= 1 && out % c.size(0) == 0)));
  return r_ok && c_ok;
#else
  return false;
#endif
}

at::Tensor lrm_effective_weight_bf16(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c) {
  if (!lrm_weight_fused(w, r, c, KernelPath::fused))
    throw std::logic_error("lrm_effective_weight_bf16: these operands do not take the kernels (lrm_weight_fused)");
  return LrmWeightBf16::apply(w, r, c);
}

}  // namespace gaugelab::gpt2
