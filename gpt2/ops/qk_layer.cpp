#include "gpt2/ops/qk_layer.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/log.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/repeat_interleave.h>

namespace gaugelab::gpt2 {

namespace {

void require_vector(const at::Tensor& t, std::int64_t d, const char* what) {
  if (!t.defined() || t.dim() != 1 || t.size(0) != d || !t.is_contiguous())
    throw std::invalid_argument(std::string(what) + " must be a contiguous [" + std::to_string(d) + "] tensor");
}

void require_heads(std::int64_t d, std::int64_t heads) {
  if (heads < 1 || d % heads != 0)
    throw std::invalid_argument("heads must divide the width " + std::to_string(d) + " (got " + std::to_string(heads) + ")");
}

// One g [H] per head spread over its d/H coordinates, in the tensor's dtype and device.
at::Tensor per_coord(const at::Tensor& g, std::int64_t d, const at::Tensor& like) {
  return g.repeat_interleave(d / g.size(0)).to(like.device(), like.scalar_type());
}

void check_pair(const at::Tensor& r_q, const at::Tensor& r_k, const at::Tensor& b_q, const at::Tensor& b_k,
                std::int64_t heads) {
  if (!r_q.defined() || r_q.dim() != 1 || !r_q.is_contiguous())
    throw std::invalid_argument("r_q must be a contiguous 1-D tensor [d]");
  const std::int64_t d = r_q.size(0);
  require_heads(d, heads);
  require_vector(r_k, d, "r_k");
  if (b_q.defined()) require_vector(b_q, d, "b_q");
  if (b_k.defined()) require_vector(b_k, d, "b_k");
}

}  // namespace

at::Tensor head_rms(const at::Tensor& x, std::int64_t heads) {
  return x.detach().view({heads, -1}).square().mean(1).sqrt();
}

void rescale_qk_pair(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, const at::Tensor& g) {
  at::NoGradGuard no_grad;
  const at::Tensor gg = g.to(r_q.device(), r_q.scalar_type());
  r_q.div_(gg);
  if (b_q.defined()) b_q.div_(gg);  // b_Q, b_K move with their rows: q_j = r_Q,j·(W̄x)_j + b_Q,j
  r_k.mul_(gg);
  if (b_k.defined()) b_k.mul_(gg);
}

at::Tensor qk_gauge_fix_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, std::int64_t heads,
                              double eps) {
  check_pair(r_q, r_k, b_q, b_k, heads);
  at::NoGradGuard no_grad;
  const at::Tensor g = ((head_rms(r_q, heads) + eps) / (head_rms(r_k, heads) + eps)).sqrt();  // [H]
  rescale_qk_pair(r_q, r_k, b_q, b_k, per_coord(g, r_q.size(0), r_q));
  return g;
}

at::Tensor head_row_norms(const at::Tensor& w, std::int64_t heads) {
  return w.detach().reshape({heads, -1}).square().sum(1).sqrt();
}

at::Tensor qk_gauge_fix_effective_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k,
                                        const at::Tensor& w_q_eff, const at::Tensor& w_k_eff, std::int64_t heads,
                                        double eps) {
  check_pair(r_q, r_k, b_q, b_k, heads);
  at::NoGradGuard no_grad;
  const at::Tensor g = ((head_row_norms(w_q_eff, heads) + eps) / (head_row_norms(w_k_eff, heads) + eps)).sqrt();  // [H]
  rescale_qk_pair(r_q, r_k, b_q, b_k, per_coord(g, r_q.size(0), r_q));
  return g;
}

at::Tensor qk_effective_log_ratio_layer(const at::Tensor& w_q_eff, const at::Tensor& w_k_eff, std::int64_t heads) {
  at::NoGradGuard no_grad;
  return at::log(head_row_norms(w_q_eff, heads) / head_row_norms(w_k_eff, heads));
}

at::Tensor vo_gauge_fix_layer(at::Tensor& r_v, at::Tensor& b_v, at::Tensor& c_o, std::int64_t heads, double eps) {
  if (!r_v.defined() || r_v.dim() != 1 || !r_v.is_contiguous())
    throw std::invalid_argument("r_v must be a contiguous 1-D tensor [d]");
  const std::int64_t d = r_v.size(0);
  require_heads(d, heads);
  require_vector(c_o, d, "c_o");
  if (b_v.defined()) require_vector(b_v, d, "b_v");
  at::NoGradGuard no_grad;
  const at::Tensor g = ((head_rms(c_o, heads) + eps) / (head_rms(r_v, heads) + eps)).sqrt();  // [H]
  const at::Tensor gg = per_coord(g, d, r_v);
  r_v.mul_(gg);
  if (b_v.defined()) b_v.mul_(gg);
  c_o.div_(gg);
  return g;
}

void transport_head_moments(at::Tensor& m, at::Tensor& v, const at::Tensor& a, std::int64_t heads,
                            core::TransportMode mode) {
  if (mode == core::TransportMode::none) throw std::invalid_argument("transport mode must be vector or covector");
  at::NoGradGuard no_grad;
  const at::Tensor f = mode == core::TransportMode::vector ? a : a.reciprocal();  // [H]
  if (m.defined()) m.view({heads, -1}).mul_(f.to(m.scalar_type()).unsqueeze(1));
  if (v.defined()) v.view({heads, -1}).mul_(f.square().to(v.scalar_type()).unsqueeze(1));
}

at::Tensor qk_cap_layer(at::Tensor& r_q, at::Tensor& r_k, at::Tensor& b_q, at::Tensor& b_k, std::int64_t heads,
                        double cap) {
  check_pair(r_q, r_k, b_q, b_k, heads);
  if (!(cap > 0)) throw std::invalid_argument("cap must be > 0");
  at::NoGradGuard no_grad;
  const at::Tensor p = head_rms(r_q, heads) * head_rms(r_k, heads);  // [H] s_Q·s_K
  const at::Tensor f = (cap / p).clamp_max(1.0).sqrt();             // [H], 1 where under the cap
  const at::Tensor g = per_coord(f, r_q.size(0), r_q);              // [d]
  r_q.mul_(g);
  r_k.mul_(g);
  if (b_q.defined()) b_q.mul_(g);
  if (b_k.defined()) b_k.mul_(g);
  return (p > cap).sum();
}

at::Tensor qk_clip_layer(at::Tensor& x_q, at::Tensor& x_k, at::Tensor& b_q, at::Tensor& b_k,
                         const at::Tensor& logit_max, double tau) {
  if (!(tau > 0)) throw std::invalid_argument("tau must be > 0");
  if (!x_q.defined() || x_q.dim() < 1 || x_q.dim() > 2 || !x_k.defined() || x_k.sizes() != x_q.sizes())
    throw std::invalid_argument("the query and key tensors must be both [d] (multipliers) or both [d, d] (weights)");
  const std::int64_t d = x_q.size(0);
  if (logit_max.dim() != 1 || logit_max.size(0) < 1 || d % logit_max.size(0) != 0)
    throw std::invalid_argument("logit_max must be [heads] with heads dividing " + std::to_string(d));
  if (b_q.defined()) require_vector(b_q, d, "b_q");
  if (b_k.defined()) require_vector(b_k, d, "b_k");
  at::NoGradGuard no_grad;
  const at::Tensor m = logit_max.to(x_q.device(), at::kFloat);  // [H]
  const at::Tensor f = (tau / m.clamp_min(tau)).sqrt();         // [H], 1 where <= tau
  const at::Tensor g = per_coord(f, d, x_q);                    // [d]
  const at::Tensor gx = x_q.dim() == 2 ? g.unsqueeze(1) : g;    // rows of W or entries of r
  x_q.mul_(gx);
  x_k.mul_(gx);
  if (b_q.defined()) b_q.mul_(g);
  if (b_k.defined()) b_k.mul_(g);
  return (m > tau).sum();
}

at::Tensor attention_logit_max_heads(const at::Tensor& q, const at::Tensor& k, bool absolute) {
  if (q.dim() != 4 || k.sizes() != q.sizes()) throw std::invalid_argument("q and k must both be [B, H, T, d_h]");
  at::NoGradGuard no_grad;
  const std::int64_t T = q.size(2), H = q.size(1);
  const at::Tensor future = at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(q.device())).triu(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  at::Tensor s = at::matmul(q.to(at::kFloat), k.to(at::kFloat).transpose(-2, -1)).mul(scale);  // [B, H, T, T]
  s = absolute ? s.abs().masked_fill(future, 0.0) : s.masked_fill(future, -std::numeric_limits<double>::infinity());
  return s.amax({0, 2, 3}).reshape({H});
}

}  // namespace gaugelab::gpt2
