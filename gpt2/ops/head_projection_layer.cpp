#include "gpt2/ops/head_projection_layer.hpp"

#include <stdexcept>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/linalg_eigh.h>
#include <ATen/ops/linalg_pinv.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

namespace gaugelab::gpt2 {

namespace {

using at::Tensor;

/// X [H, n, m] with A X + X B = C per head, A [H, n, n], B [H, m, m] symmetric PSD (core::solve_sylvester_psd).
Tensor sylvester_psd(const Tensor& a, const Tensor& b, const Tensor& c, double rel_tol = 1e-12) {
  const auto [la, ua] = at::linalg_eigh(a);  // ascending
  const auto [lb, ub] = at::linalg_eigh(b);
  const Tensor ct = at::matmul(at::matmul(ua.transpose(-2, -1), c), ub);
  const Tensor den = la.unsqueeze(-1) + lb.unsqueeze(-2);                                       // [H, n, m]
  const Tensor scale = (la.abs().amax(-1) + lb.abs().amax(-1)).view({-1, 1, 1}) * rel_tol;     // [H, 1, 1]
  const Tensor x = at::where(den > scale, ct / den, at::zeros_like(ct));
  return at::matmul(at::matmul(ua, x), ub.transpose(-2, -1));
}

/// Rows [s·d, (s+1)·d) of a [3d, d] weight as the core's per-head [H, d (+1), d_h] blocks, the bias
/// (if defined) as the last row of each.
Tensor head_blocks(const Tensor& w, const Tensor& b, std::int64_t s, std::int64_t H) {
  const std::int64_t d = w.size(1), dh = d / H;
  Tensor x = w.narrow(0, s * d, d).to(at::kDouble).reshape({H, dh, d}).transpose(1, 2);  // [H, d, dh]
  if (b.defined()) x = at::cat({x, b.narrow(0, s * d, d).to(at::kDouble).reshape({H, 1, dh})}, 1);
  return x;
}

/// The inverse of head_blocks: writes [H, d (+1), d_h] back into rows of g [3d, d] (and gb [3d]).
void store_blocks(const Tensor& x, Tensor& g, Tensor& gb, std::int64_t s, std::int64_t /*H*/) {
  const std::int64_t d = g.size(1);
  g.narrow(0, s * d, d).copy_(x.narrow(1, 0, d).transpose(1, 2).reshape({d, d}));
  if (gb.defined()) gb.narrow(0, s * d, d).copy_(x.narrow(1, d, 1).reshape({d}));
}

}  // namespace

const char* grad_projection_name(GradProjection p) { return core::choice_name(grad_projection_table(), p); }

GradProjection parse_grad_projection(const std::string& name) {
  const auto& t = grad_projection_table();
  const std::size_t i = core::choice_index(t, name);
  if (i == t.size())
    throw std::invalid_argument("unknown gradient projection '" + name + "' (" + core::choice_list(t) + ")");
  return t[i].value;
}

void project_layer_gradients(const Tensor& w_attn, const Tensor& b_attn, const Tensor& w_proj, Tensor& g_attn,
                             Tensor& g_battn, Tensor& g_proj, std::int64_t H, GradProjection mode) {
  if (mode == GradProjection::none) return;
  if (w_attn.dim() != 2 || w_proj.dim() != 2 || H < 1 || w_attn.size(1) % H != 0)
    throw std::invalid_argument("project_layer_gradients: w_attn [3d, d] and w_proj [d, d] with heads dividing d expected");
  at::NoGradGuard no_grad;
  const std::int64_t d = w_attn.size(1), dh = d / H;
  if (w_attn.size(0) != 3 * d || w_proj.size(0) != d || w_proj.size(1) != d || d % H != 0 ||
      !g_attn.sizes().equals(w_attn.sizes()) || !g_proj.sizes().equals(w_proj.sizes()))
    throw std::invalid_argument("project_layer_gradients: w_attn [3d, d], w_proj [d, d] and gradients of their shapes expected");
  const Tensor q = head_blocks(w_attn, b_attn, 0, H), k = head_blocks(w_attn, b_attn, 1, H),
               v = head_blocks(w_attn, b_attn, 2, H);
  Tensor gq = head_blocks(g_attn, g_battn, 0, H), gk = head_blocks(g_attn, g_battn, 1, H),
         gv = head_blocks(g_attn, g_battn, 2, H);
  const Tensor wo = w_proj.to(at::kDouble).reshape({d, H, dh}).permute({1, 2, 0});  // [H, dh, d]
  Tensor go = g_proj.to(at::kDouble).reshape({d, H, dh}).permute({1, 2, 0});        // [H, dh, d]
  auto t = [](const Tensor& x) { return x.transpose(-2, -1); };
  Tensor x, y;  // [H, dh, dh]: the algebra elements whose tangents are removed
  if (mode == GradProjection::exact) {
    x = sylvester_psd(at::matmul(t(q), q), at::matmul(t(k), k), at::matmul(t(q), gq) - at::matmul(t(gk), k));
    y = sylvester_psd(at::matmul(t(v), v), at::matmul(wo, t(wo)), at::matmul(t(v), gv) - at::matmul(go, t(wo)));
  } else {
    x = 0.5 * (at::matmul(at::linalg_pinv(q), gq) - t(at::matmul(at::linalg_pinv(k), gk)));
    y = 0.5 * (at::matmul(at::linalg_pinv(v), gv) - at::matmul(go, at::linalg_pinv(wo)));
  }
  gq = gq - at::matmul(q, x);
  gk = gk + at::matmul(k, t(x));
  gv = gv - at::matmul(v, y);
  go = go + at::matmul(y, wo);
  store_blocks(gq, g_attn, g_battn, 0, H);
  store_blocks(gk, g_attn, g_battn, 1, H);
  store_blocks(gv, g_attn, g_battn, 2, H);
  g_proj.copy_(go.permute({2, 0, 1}).reshape({d, d}));
}

void metric_inverse_sqrt_layer(const Tensor& w_attn, const Tensor& b_attn, const Tensor& w_proj, Tensor& d_attn,
                               Tensor& d_battn, Tensor& d_proj, std::int64_t H) {
  at::NoGradGuard no_grad;
  const std::int64_t d = w_attn.size(1), dh = d / H;
  auto t = [](const Tensor& x) { return x.transpose(-2, -1); };
  auto inv_sqrt = [](const Tensor& g) {  // [H, n, n] SPD -> g^{-1/2}
    const auto [l, u] = at::linalg_eigh(g);
    return at::matmul(u * l.rsqrt().unsqueeze(-2), u.transpose(-2, -1));
  };
  const Tensor q = head_blocks(w_attn, b_attn, 0, H), k = head_blocks(w_attn, b_attn, 1, H),
               v = head_blocks(w_attn, b_attn, 2, H);
  const Tensor wo = w_proj.to(at::kDouble).reshape({d, H, dh}).permute({1, 2, 0});  // [H, dh, d]
  Tensor dq = head_blocks(d_attn, d_battn, 0, H), dk = head_blocks(d_attn, d_battn, 1, H),
         dv = head_blocks(d_attn, d_battn, 2, H);
  Tensor dwo = d_proj.to(at::kDouble).reshape({d, H, dh}).permute({1, 2, 0});
  dq = at::matmul(dq, inv_sqrt(at::matmul(t(k), k)));
  dk = at::matmul(dk, inv_sqrt(at::matmul(t(q), q)));
  dv = at::matmul(dv, inv_sqrt(at::matmul(wo, t(wo))));
  dwo = at::matmul(inv_sqrt(at::matmul(t(v), v)), dwo);
  store_blocks(dq, d_attn, d_battn, 0, H);
  store_blocks(dk, d_attn, d_battn, 1, H);
  store_blocks(dv, d_attn, d_battn, 2, H);
  d_proj.copy_(dwo.permute({2, 0, 1}).reshape({d, d}));
}

}  // namespace gaugelab::gpt2
