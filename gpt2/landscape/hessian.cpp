#include "gpt2/landscape/hessian.hpp"

#include <cstring>
#include <stdexcept>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <ATen/CPUGeneratorImpl.h>
#include <Spectra/SymEigsSolver.h>
#include <torch/csrc/autograd/autograd.h>

#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/model/head_projection.hpp"

namespace gaugelab::gpt2 {

namespace {

using at::Tensor;

/// The flat segment of parameter `t` in h (throws if it is not one of h's parameters).
std::pair<std::int64_t, std::int64_t> segment(const LossHessian& h, const std::vector<Tensor>& params, const Tensor& t) {
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].is_same(t)) return {h.offsets()[i], params[i].numel()};
  throw std::invalid_argument("a tensor that is not one of the Hessian's parameters");
}

}  // namespace

LossHessian::LossHessian(GPT& model, const Tensor& idx, const Tensor& targets) : model_(model) {
  model.merge_multipliers();  // exact; the multipliers then stay at 1, outside the space
  was_training_ = model.training();
  model.train(false);
  model.set_twice_differentiable(true);
  model.visit([&](const std::string& name, Tensor& t, ParamRole role) {
    if (role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other) return;
    names_.push_back(name);
    params_.push_back(t);
    offsets_.push_back(n_);
    n_ += t.numel();
  });
  const Tensor logits = model_logits(model, idx);  // [B, T, V] in the parameters' dtype (float64 stays float64)
  const Tensor loss = at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}),
                                             targets.to(logits.device(), at::kLong).reshape({-1}));
  loss_ = loss.item<double>();
  grads_ = torch::autograd::grad({loss}, params_, {}, /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
  std::vector<Tensor> flat;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!grads_[i].defined()) grads_[i] = at::zeros_like(params_[i]);
    flat.push_back(grads_[i].detach().reshape({-1}).to(at::kCPU, at::kDouble));
  }
  grad_flat_ = at::cat(flat);
}

LossHessian::~LossHessian() {
  model_.set_twice_differentiable(false);
  model_.train(was_training_);
}

Tensor LossHessian::hvp(const Tensor& v) const {
  if (v.numel() != n_) throw std::invalid_argument("LossHessian::hvp: v must have " + std::to_string(n_) + " entries");
  std::vector<Tensor> vs;
  Tensor dot;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const Tensor vi = v.narrow(0, offsets_[i], params_[i].numel()).reshape(params_[i].sizes()).to(grads_[i].options());
    const Tensor term = (grads_[i] * vi).sum();
    dot = dot.defined() ? dot + term : term;
  }
  const std::vector<Tensor> hv =
      torch::autograd::grad({dot}, params_, {}, /*retain_graph=*/true, /*create_graph=*/false, /*allow_unused=*/true);
  std::vector<Tensor> flat;
  for (std::size_t i = 0; i < params_.size(); ++i)
    flat.push_back(hv[i].defined() ? hv[i].reshape({-1}).to(at::kCPU, at::kDouble)
                                   : at::zeros({params_[i].numel()}, at::TensorOptions().dtype(at::kDouble)));
  return at::cat(flat);
}

Tensor LossHessian::flat_parameters() const {
  at::NoGradGuard no_grad;
  std::vector<Tensor> flat;
  for (const Tensor& p : params_) flat.push_back(p.detach().reshape({-1}).to(at::kCPU, at::kDouble));
  return at::cat(flat);
}

namespace {

/// v with every layer's attention segments (c_attn weight/bias, attn_proj weight, as tensors of their
/// parameters' shapes, float64 CPU views) passed through fn(block, weights on the CPU, segments).
using LayerFn = std::function<void(const Tensor& w_attn, const Tensor& b_attn, const Tensor& w_proj, Tensor& d_attn,
                                   Tensor& d_b, Tensor& d_proj)>;
Tensor map_attention_segments(const GPT& model, const LossHessian& h, const Tensor& v, const LayerFn& fn) {
  at::NoGradGuard no_grad;
  Tensor out = v.clone();
  std::vector<Tensor> params;  // the Hessian's parameters, by the same visit (tensors are shared handles)
  const_cast<GPT&>(model).visit([&](const std::string&, Tensor& t, ParamRole role) {
    if (role != ParamRole::multiplier_qk && role != ParamRole::multiplier_other) params.push_back(t);
  });
  for (const Block& b : model.h) {
    const auto [oa, na] = segment(h, params, b.c_attn.weight);
    const auto [op, np] = segment(h, params, b.attn_proj.weight);
    Tensor d_attn = out.narrow(0, oa, na).view(b.c_attn.weight.sizes());
    Tensor d_proj = out.narrow(0, op, np).view(b.attn_proj.weight.sizes());
    Tensor d_b, w_b;
    if (b.c_attn.bias.defined()) {
      const auto [ob, nb] = segment(h, params, b.c_attn.bias);
      d_b = out.narrow(0, ob, nb);
      w_b = b.c_attn.bias.detach().to(at::kCPU);
    }
    fn(b.c_attn.weight.detach().to(at::kCPU), w_b, b.attn_proj.weight.detach().to(at::kCPU), d_attn, d_b, d_proj);
  }
  return out;
}

}  // namespace

Tensor horizontal_projection(const GPT& model, const LossHessian& h, const Tensor& v) {
  if (model.config().qk_norm != QkNorm::none)  // multipliers: folded by LossHessian, outside the space
    throw std::invalid_argument("the horizontal projection needs QK-norm off (it breaks the GL(d_h) gauge)");
  const std::int64_t H = model.config().n_head;
  return map_attention_segments(model, h, v, [&](const Tensor& w, const Tensor& wb, const Tensor& p, Tensor& dw, Tensor& db,
                                                 Tensor& dp) { project_layer_gradients(w, wb, p, dw, db, dp, H, GradProjection::exact); });
}

Tensor metric_inverse_sqrt(const GPT& model, const LossHessian& h, const Tensor& v) {
  const std::int64_t H = model.config().n_head;
  return map_attention_segments(model, h, v, [&](const Tensor& w, const Tensor& wb, const Tensor& p, Tensor& dw, Tensor& db,
                                                 Tensor& dp) { metric_inverse_sqrt_layer(w, wb, p, dw, db, dp, H); });
}

OrbitJet head_orbit_jet(const GPT& model, const LossHessian& h, std::int64_t layer, std::int64_t head, const Tensor& x,
                        const Tensor& y) {
  at::NoGradGuard no_grad;
  std::vector<Tensor> params;
  const_cast<GPT&>(model).visit([&](const std::string&, Tensor& t, ParamRole role) {
    if (role != ParamRole::multiplier_qk && role != ParamRole::multiplier_other) params.push_back(t);
  });
  const Block& b = model.h.at(static_cast<std::size_t>(layer));
  const std::int64_t d = model.config().n_embd, dh = model.config().head_dim(), r0 = head * dh;
  OrbitJet j{at::zeros({h.dim()}, at::TensorOptions().dtype(at::kDouble)),
             at::zeros({h.dim()}, at::TensorOptions().dtype(at::kDouble))};
  const Tensor x2 = at::matmul(x, x), y2 = at::matmul(y, y);
  // In torch's layout (rows of c_attn are the core's columns): exp(tX) moves Q rows by exp(tX)ᵀ, K rows by
  // exp(−tX), V rows by exp(tY)ᵀ, and the head's attn_proj columns by exp(−tY)ᵀ (core::head_orbit_tangent).
  auto put = [&](const Tensor& param, std::int64_t row0, bool rows, const Tensor& t1, const Tensor& t2) {
    const auto [off, num] = segment(h, params, param);
    Tensor tv = j.tangent.narrow(0, off, num).view(param.sizes());
    Tensor av = j.acceleration.narrow(0, off, num).view(param.sizes());
    const Tensor w = param.detach().to(at::kCPU, at::kDouble);
    if (param.dim() == 1) {  // a bias: the head's dh entries as a column
      const Tensor bh = w.narrow(0, row0, dh).unsqueeze(1);
      tv.narrow(0, row0, dh).copy_(at::matmul(t1, bh).squeeze(1));
      av.narrow(0, row0, dh).copy_(at::matmul(t2, bh).squeeze(1));
    } else if (rows) {
      const Tensor wh = w.narrow(0, row0, dh);  // [dh, d]
      tv.narrow(0, row0, dh).copy_(at::matmul(t1, wh));
      av.narrow(0, row0, dh).copy_(at::matmul(t2, wh));
    } else {
      const Tensor wh = w.narrow(1, row0, dh);  // [d, dh]
      tv.narrow(1, row0, dh).copy_(at::matmul(wh, t1));
      av.narrow(1, row0, dh).copy_(at::matmul(wh, t2));
    }
  };
  const Tensor xt = x.t(), x2t = x2.t(), yt = y.t(), y2t = y2.t();
  put(b.c_attn.weight, r0, true, xt, x2t);              // Q: W_q X, W_q X²
  put(b.c_attn.weight, d + r0, true, -x, x2);           // K: −W_k Xᵀ, W_k (Xᵀ)²
  put(b.c_attn.weight, 2 * d + r0, true, yt, y2t);      // V: W_v Y, W_v Y²
  put(b.attn_proj.weight, r0, false, -yt, y2t);         // O: −Y W_o, Y² W_o
  if (b.c_attn.bias.defined()) {
    put(b.c_attn.bias, r0, true, xt, x2t);
    put(b.c_attn.bias, d + r0, true, -x, x2);
    put(b.c_attn.bias, 2 * d + r0, true, yt, y2t);
  }
  return j;
}

namespace {

struct SpectraOp {
  using Scalar = double;
  std::int64_t n;
  const std::function<Tensor(const Tensor&)>* op;
  std::int64_t* products;
  Eigen::Index rows() const { return n; }
  Eigen::Index cols() const { return n; }
  void perform_op(const double* x_in, double* y_out) const {
    const Tensor x = at::from_blob(const_cast<double*>(x_in), {n}, at::TensorOptions().dtype(at::kDouble));
    const Tensor y = (*op)(x).contiguous();
    std::memcpy(y_out, y.data_ptr<double>(), static_cast<std::size_t>(n) * sizeof(double));
    ++*products;
  }
};

}  // namespace

std::vector<double> top_eigenvalues(std::int64_t n, const std::function<Tensor(const Tensor&)>& op, std::int64_t k,
                                    std::int64_t& products, double tol, std::int64_t max_restarts, std::uint64_t seed) {
  if (k < 1 || k >= n) throw std::invalid_argument("top_eigenvalues: need 1 <= k < n");
  SpectraOp sop{n, &op, &products};
  const std::int64_t ncv = std::min<std::int64_t>(n, std::max<std::int64_t>(2 * k + 1, 20));
  Spectra::SymEigsSolver<SpectraOp> solver(sop, k, ncv);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const Tensor v0 = at::randn({n}, gen, at::TensorOptions().dtype(at::kDouble));
  solver.init(v0.data_ptr<double>());
  solver.compute(Spectra::SortRule::LargestAlge, max_restarts, tol, Spectra::SortRule::LargestAlge);
  if (solver.info() != Spectra::CompInfo::Successful)
    throw std::runtime_error("Lanczos did not converge in " + std::to_string(max_restarts) + " restarts (tol " +
                             std::to_string(tol) + ")");
  const Eigen::VectorXd ev = solver.eigenvalues();
  return std::vector<double>(ev.data(), ev.data() + ev.size());
}

}  // namespace gaugelab::gpt2
