#include "gpt2/ops/quotient_layer.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/linalg_solve.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>

namespace gaugelab::gpt2 {

namespace {

at::Tensor or_ones(const at::Tensor& t, std::int64_t n, const at::Tensor& like) {
  if (t.defined() && (t.dim() != 1 || t.size(0) != n))
    throw std::invalid_argument("a multiplier of the attention maps must be [" + std::to_string(n) + "]");
  return t.defined() ? t.detach() : at::ones({n}, like.options());
}

// G [H, k, k] -> G + λI, or its diagonal + λ as [H, k] when !full.
at::Tensor damped(const at::Tensor& G, const QuotientUpdate& q) {
  const std::int64_t k = G.size(-1);
  if (!q.full) return G.diagonal(0, -2, -1) + q.damping;
  return G + q.damping * at::eye(k, G.options());
}

// G⁻¹·X for X [H, k, n] (G [H, k, k] full, or [H, k] diagonal).
at::Tensor left_solve(const at::Tensor& G, const at::Tensor& X, bool full) {
  return full ? at::linalg_solve(G, X) : X / G.unsqueeze(-1);
}

// Rows of one factor's effective weight per head: diag(r)·W̄·diag(c) as [H, dh, d].
at::Tensor eff_rows(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c, std::int64_t H) {
  return (w * r.unsqueeze(1) * c.unsqueeze(0)).view({H, -1, w.size(1)});
}

// With match_rms, the factor per head [H] that brings a corrected pair (Q with K, or V with O) back to the RMS of its
// raw increments: √((‖U_A,h‖² + ‖U_B,h‖²) / (‖Ũ_A,h‖² + ‖Ũ_B,h‖²)) over the head's slices ca, cb (corrected) and
// ra, rb (raw), each [H, ...] in the stored coordinates the optimizer stepped in; undefined without match_rms. One
// factor for both members of the pair scales the head's first-order motion ΔM = Ũ_A·Bᵀ + A·Ũ_Bᵀ as a whole and so
// keeps its direction, and with it the correction's first-order gauge compatibility (seed 003 §3); a factor per
// block or per member would weight the two terms by amounts that depend on the representative. A zero corrected
// pair stays zero.
at::Tensor pair_rms_factor(const at::Tensor& ca, const at::Tensor& cb, const at::Tensor& ra, const at::Tensor& rb,
                           std::int64_t H, const QuotientUpdate& q) {
  if (!q.match_rms) return {};
  auto sq = [H](const at::Tensor& t) { return t.reshape({H, -1}).square().sum(1); };  // [H]
  return (sq(ra) + sq(rb)).sqrt() / (sq(ca) + sq(cb)).sqrt().clamp_min(1e-30);
}

// t [H, ...] scaled head by head by f [H] (unchanged when f is undefined).
at::Tensor per_head(const at::Tensor& t, const at::Tensor& f) {
  if (!f.defined()) return t;
  std::vector<std::int64_t> shape(static_cast<std::size_t>(t.dim()), 1);
  shape[0] = f.size(0);
  return t * f.view(shape);
}

}  // namespace

void correct_attention_increments_layer(at::Tensor& w, const at::Tensor& old, at::Tensor& pw, const at::Tensor& P_old,
                                        const AttentionMultipliers& mult, std::int64_t H, const QuotientUpdate& q) {
  if (w.dim() != 2 || w.size(0) != 3 * w.size(1) || old.sizes() != w.sizes())
    throw std::invalid_argument("w_attn and w_attn_before must both be [3d, d]");
  const std::int64_t d = w.size(1);
  if (pw.dim() != 2 || pw.size(0) != d || pw.size(1) != d || P_old.sizes() != pw.sizes())
    throw std::invalid_argument("w_proj and w_proj_before must both be [d, d] with d = " + std::to_string(d));
  if (H < 1 || d % H != 0) throw std::invalid_argument("heads must divide the width " + std::to_string(d));
  if (!(q.damping >= 0)) throw std::invalid_argument("damping must be >= 0");
  at::NoGradGuard no_grad;
  const std::int64_t dh = d / H;
  const at::Tensor U = w.detach() - old;  // raw increments [3d, d]
  auto part = [&](const at::Tensor& t, int i) { return t.narrow(0, i * d, d); };
  const at::Tensor rq = or_ones(mult.r_q, d, old), cq = or_ones(mult.c_q, d, old);
  const at::Tensor rk = or_ones(mult.r_k, d, old), ck = or_ones(mult.c_k, d, old);
  const at::Tensor rv = or_ones(mult.r_v, d, old), cv = or_ones(mult.c_v, d, old);
  const at::Tensor Q = eff_rows(part(old, 0), rq, cq, H), K = eff_rows(part(old, 1), rk, ck, H);  // [H, dh, d]
  // Ũ (rows layout) = diag(r)⁻¹·G⁻¹·diag(r)·U per head; G of the opposite factor's effective rows.
  auto correct_rows = [&](const at::Tensor& Uw, const at::Tensor& r, const at::Tensor& opposite) {
    const at::Tensor G = damped(at::matmul(opposite, opposite.transpose(1, 2)), q);  // [H, dh, dh] or [H, dh]
    const at::Tensor rh = r.view({H, dh, 1});
    return (left_solve(G, rh * Uw.reshape({H, dh, d}), q.full) / rh).reshape({d, d});
  };
  const at::Tensor UQ = correct_rows(part(U, 0), rq, K).view({H, dh, d});  // [H, dh, d]
  const at::Tensor UK = correct_rows(part(U, 1), rk, Q).view({H, dh, d});
  const at::Tensor f_qk = pair_rms_factor(UQ, UK, part(U, 0), part(U, 1), H, q);  // [H] or undefined
  part(w, 0).copy_(part(old, 0) + per_head(UQ, f_qk).reshape({d, d}));
  part(w, 1).copy_(part(old, 1) + per_head(UK, f_qk).reshape({d, d}));
  if (!q.vo) return;
  // V/O: W_O's rows are the output projection's head columns, P_eff[:, h] [d, dh].
  const at::Tensor ro = or_ones(mult.r_o, d, P_old), co = or_ones(mult.c_o, d, P_old);
  const at::Tensor P_eff = P_old * ro.unsqueeze(1) * co.unsqueeze(0);       // [d, d]
  const at::Tensor Ph = P_eff.view({d, H, dh}).permute({1, 0, 2});          // [H, d, dh]
  const at::Tensor V = eff_rows(part(old, 2), rv, cv, H);                   // [H, dh, d]
  // Ũ_V rows: G = W_O W_Oᵀ = P_hᵀ P_h.
  const at::Tensor UV = correct_rows(part(U, 2), rv, Ph.transpose(1, 2)).view({H, dh, d});
  // Ũ_P_h = U_P_h·diag(c_h)·G_V⁻¹·diag(c_h)⁻¹, G_V = W_VᵀW_V = V_h V_hᵀ (symmetric: solve on the transpose).
  const at::Tensor UP = (pw.detach() - P_old).view({d, H, dh}).permute({1, 0, 2});  // [H, d, dh]
  const at::Tensor ch = co.view({H, 1, dh});
  const at::Tensor GV = damped(at::matmul(V, V.transpose(1, 2)), q);
  const at::Tensor X = (UP * ch).transpose(1, 2);                                    // [H, dh, d]
  const at::Tensor UO = (left_solve(GV, X, q.full).transpose(1, 2) / ch);           // [H, d, dh]
  const at::Tensor f_vo = pair_rms_factor(UV, UO, part(U, 2), UP, H, q);            // [H] or undefined
  part(w, 2).copy_(part(old, 2) + per_head(UV, f_vo).reshape({d, d}));
  pw.copy_(P_old + per_head(UO, f_vo).permute({1, 0, 2}).reshape({d, d}));
}

}  // namespace gaugelab::gpt2
