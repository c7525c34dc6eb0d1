#include "gpt2/train/quotient_update.hpp"

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/linalg_solve.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>

namespace gaugelab::gpt2 {

namespace {

at::Tensor or_ones(const at::Tensor& t, std::int64_t n, const at::Tensor& like) {
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

}  // namespace

AttentionSnapshot snapshot_attention(const GPT& model) {
  AttentionSnapshot s;
  for (const Block& b : model.h) {
    s.c_attn.push_back(b.c_attn.weight.detach().clone());
    s.attn_proj.push_back(b.attn_proj.weight.detach().clone());
  }
  return s;
}

namespace {

// With match_rms, the corrected increment scaled to the raw one's RMS (one factor per block, on the device);
// a zero corrected increment stays zero.
at::Tensor keep_rms(const at::Tensor& corrected, const at::Tensor& raw, const QuotientUpdate& q) {
  if (!q.match_rms) return corrected;
  return corrected * (raw.square().mean().sqrt() / corrected.square().mean().sqrt().clamp_min(1e-30));
}

}  // namespace

void correct_attention_increments(GPT& model, const AttentionSnapshot& before, const QuotientUpdate& q) {
  at::NoGradGuard no_grad;
  const std::int64_t d = model.config().n_embd, H = model.config().n_head, dh = model.config().head_dim();
  for (std::size_t l = 0; l < model.h.size(); ++l) {
    Block& b = model.h[l];
    const at::Tensor old = before.c_attn[l];             // [3d, d]
    at::Tensor w = b.c_attn.weight;                      // [3d, d], written in place
    const at::Tensor U = w.detach() - old;               // raw increments
    auto part = [&](const at::Tensor& t, int i) { return t.narrow(0, i * d, d); };
    const LrmLinear::Group& gq = b.c_attn.groups[0];
    const LrmLinear::Group& gk = b.c_attn.groups[1];
    const LrmLinear::Group& gv = b.c_attn.groups[2];
    const at::Tensor rq = or_ones(gq.row_scale(d), d, old), cq = or_ones(gq.c, d, old);
    const at::Tensor rk = or_ones(gk.row_scale(d), d, old), ck = or_ones(gk.c, d, old);
    const at::Tensor rv = or_ones(gv.row_scale(d), d, old), cv = or_ones(gv.c, d, old);
    const at::Tensor Q = eff_rows(part(old, 0), rq, cq, H), K = eff_rows(part(old, 1), rk, ck, H);  // [H, dh, d]
    // Ũ (rows layout) = diag(r)⁻¹·G⁻¹·diag(r)·U per head; G of the opposite factor's effective rows.
    auto correct_rows = [&](const at::Tensor& Uw, const at::Tensor& r, const at::Tensor& opposite) {
      const at::Tensor G = damped(at::matmul(opposite, opposite.transpose(1, 2)), q);  // [H, dh, dh] or [H, dh]
      const at::Tensor rh = r.view({H, dh, 1});
      return (left_solve(G, rh * Uw.reshape({H, dh, d}), q.full) / rh).reshape({d, d});
    };
    part(w, 0).copy_(part(old, 0) + keep_rms(correct_rows(part(U, 0), rq, K), part(U, 0), q));
    part(w, 1).copy_(part(old, 1) + keep_rms(correct_rows(part(U, 1), rk, Q), part(U, 1), q));
    if (!q.vo) continue;
    // V/O: W_O's rows are the output projection's head columns, P_eff[:, h] [d, dh].
    const LrmLinear::Group& go = b.attn_proj.groups[0];
    const at::Tensor P_old = before.attn_proj[l];                              // [d, d]
    const at::Tensor ro = or_ones(go.row_scale(d), d, P_old), co = or_ones(go.c, d, P_old);
    const at::Tensor P_eff = P_old * ro.unsqueeze(1) * co.unsqueeze(0);       // [d, d]
    const at::Tensor Ph = P_eff.view({d, H, dh}).permute({1, 0, 2});          // [H, d, dh]
    const at::Tensor V = eff_rows(part(old, 2), rv, cv, H);                   // [H, dh, d]
    // Ũ_V rows: G = W_O W_Oᵀ = P_hᵀ P_h.
    part(w, 2).copy_(part(old, 2) + keep_rms(correct_rows(part(U, 2), rv, Ph.transpose(1, 2)), part(U, 2), q));
    // Ũ_P_h = U_P_h·diag(c_h)·G_V⁻¹·diag(c_h)⁻¹, G_V = W_VᵀW_V = V_h V_hᵀ (symmetric: solve on the transpose).
    at::Tensor pw = b.attn_proj.weight;
    const at::Tensor UP = (pw.detach() - P_old).view({d, H, dh}).permute({1, 0, 2});  // [H, d, dh]
    const at::Tensor ch = co.view({H, 1, dh});
    const at::Tensor GV = damped(at::matmul(V, V.transpose(1, 2)), q);
    const at::Tensor X = (UP * ch).transpose(1, 2);                                    // [H, dh, d]
    const at::Tensor corrected = (left_solve(GV, X, q.full).transpose(1, 2) / ch);    // [H, d, dh]
    pw.copy_(P_old + keep_rms(corrected.permute({1, 0, 2}).reshape({d, d}), pw.detach() - P_old, q));
  }
}

}  // namespace gaugelab::gpt2
