// The loss Hessian of a GPT-2 checkpoint and its restriction to the gauge-orthogonal (horizontal)
// subspace (seed 001 Prop. 9, §5.1, §5.3): Hessian-vector products through LibTorch's double backward,
// Rayleigh quotients along Lie-algebra (vertical) and random directions, and the top eigenvalues by
// Lanczos (Spectra, header-only) of H and of P·H·P, P the exact horizontal projection of every head
// (model/head_projection.hpp: Remark 51's Sylvester solves).
//
// The space is the plain weights: multipliers are folded first (exact) and held fixed, so the group acting
// is seed 001's per-head GL(d_h) × GL(d_h) on Q/K and V/O (biases moving with their matrices). Other
// continuous symmetries of GPT-2 (each LayerNorm's gain against its consumers' columns) are not quotiented
// out; their tangents stay in P's range (measured by the caller as what is left).
//
// Prop. 9 in one line: L(exp(tξ)·θ) = L(θ) for every algebra element ξ, so with v = ξ·θ the orbit tangent and
// a = ξ²·θ its acceleration, d²/dt² at 0 gives vᵀHv + ∇L·a = 0; at a critical point (∇L = 0) every vertical
// direction is a zero-curvature direction. Away from one, vᵀHv = −∇L·a: the identity this tool checks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// The mean next-token loss of `model` on one fixed batch, its gradient and Hessian-vector products over the
/// model's non-multiplier parameters, flattened in visit order into float64 vectors [n] on the CPU.
/// Switches the model to eval mode and twice-differentiable attention for its lifetime (restored after).
class LossHessian {
 public:
  LossHessian(GPT& model, const at::Tensor& idx /*[B, T]*/, const at::Tensor& targets /*[B, T]*/);
  ~LossHessian();
  LossHessian(const LossHessian&) = delete;
  LossHessian& operator=(const LossHessian&) = delete;

  std::int64_t dim() const { return n_; }
  double loss() const { return loss_; }
  const at::Tensor& gradient() const { return grad_flat_; }  // [n] float64
  /// H·v for v [n] float64 (CPU); the result [n] float64 on the CPU.
  at::Tensor hvp(const at::Tensor& v) const;
  /// Parameter views: the flat segment [offset, offset + numel) belongs to names()[i].
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::int64_t>& offsets() const { return offsets_; }
  /// The flat vector of the model's current values of those parameters.
  at::Tensor flat_parameters() const;

 private:
  GPT& model_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  std::vector<std::int64_t> offsets_;
  std::int64_t n_ = 0;
  double loss_ = 0;
  std::vector<at::Tensor> grads_;  // with their graph (create_graph), for the products
  at::Tensor grad_flat_;
  bool was_training_ = false;
};

/// The exact horizontal projection of a flat direction v [n] (float64) at the model's current weights: every
/// layer's c_attn weight/bias and attn_proj weight segments projected per head (Remark 51); other
/// segments unchanged. The multipliers are folded (LossHessian does it); QK-norm must be off.
at::Tensor horizontal_projection(const GPT& model, const LossHessian& h, const at::Tensor& v);

/// M^{-1/2}·v for the gauge-covariant metric of every head (model/head_projection.hpp) and the identity on
/// every other parameter: the eigenvalues of M^{-1/2}·H·M^{-1/2} do not depend on the representative.
at::Tensor metric_inverse_sqrt(const GPT& model, const LossHessian& h, const at::Tensor& v);

/// The orbit tangent v = ξ·θ and acceleration a = ξ²·θ [n] of one head's algebra element ξ = (X, Y)
/// (X, Y [d_h, d_h] float64) at the model's current weights, zero outside the head's blocks.
struct OrbitJet {
  at::Tensor tangent, acceleration;
};
OrbitJet head_orbit_jet(const GPT& model, const LossHessian& h, std::int64_t layer, std::int64_t head,
                        const at::Tensor& x, const at::Tensor& y);

/// The `k` largest eigenvalues (descending) of the symmetric operator v ↦ op(v) on [n] by Lanczos
/// (Spectra's SymEigsSolver, ncv = min(n, max(2k + 1, 20)) Krylov vectors). `products` counts op calls.
std::vector<double> top_eigenvalues(std::int64_t n, const std::function<at::Tensor(const at::Tensor&)>& op,
                                    std::int64_t k, std::int64_t& products, double tol = 1e-6,
                                    std::int64_t max_restarts = 200, std::uint64_t seed = 1);

}  // namespace gaugelab::gpt2
