// The learnable-multiplier linear map on raw tensors (seed 002; seed 000 eq. 1):
//   W_eff = diag(r)·W̄·diag(c),  y = x·W_effᵀ + b   (W̄ [out, in], torch's Linear layout).
// gpt2/model/lrm.hpp's LrmLinear forms its effective weight here; the `gaugelab.torch` operator
// lrm_linear (and its module LRMLinear) calls the same function. Composite of ATen ops: autograd carries
// the gradients to W̄, r, c and b on any device.
#pragma once

#include <ATen/core/Tensor.h>

namespace gaugelab::gpt2 {

/// W_eff [out, in]: w [out, in]; r [out] or undefined (no row scale); c [in] (one column scale), [G, in]
/// (the rows split into G equal groups, each with its own column scale, as GPT-2's packed Q/K/V), or
/// undefined. Throws std::invalid_argument on other shapes.
at::Tensor lrm_effective_weight(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c);

/// x [..., in] -> [..., out] = x·W_effᵀ + b, b [out] or undefined.
at::Tensor lrm_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& r,
                      const at::Tensor& c);

}  // namespace gaugelab::gpt2
