#include "gpt2/model/head_gauge.hpp"

#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/linalg_inv.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mv.h>

#include "gpt2/ops/qk_layer.hpp"

namespace gaugelab::gpt2 {

namespace {

LrmLinear::Group& qkv_group(Block& b, LrmSite site) {
  switch (site) {
    case LrmSite::q: return b.q();
    case LrmSite::k: return b.k();
    case LrmSite::v: return b.v();
    default: throw std::invalid_argument("transform_head_rows: site must be q, k or v");
  }
}

at::Tensor f64(const at::Tensor& t, const at::Tensor& like) { return t.to(like.device(), at::kDouble); }

void check_square(const at::Tensor& m, HeadSlice hs, const char* what) {
  if (m.dim() != 2 || m.size(0) != hs.size || m.size(1) != hs.size)
    throw std::invalid_argument(std::string(what) + ": the gauge matrix must be [d_h, d_h]");
}

at::Tensor required(const at::Tensor& t, const char* what) {
  if (!t.defined()) throw std::invalid_argument(std::string(what) + ": the needed multipliers are not in this placement");
  return t;
}

}  // namespace

void transform_head_rows(Block& b, LrmSite site, HeadSlice hs, const at::Tensor& m) {
  check_square(m, hs, "transform_head_rows");
  at::NoGradGuard no_grad;
  const std::int64_t d = b.c_attn.rows_per_group();
  const std::int64_t part = site == LrmSite::q ? 0 : site == LrmSite::k ? 1 : 2;
  const LrmLinear::Group& g = qkv_group(b, site);
  at::Tensor w = b.c_attn.weight.narrow(0, part * d + hs.begin, hs.size);  // W̄_h [dh, d] view
  const bool has_bias = b.c_attn.bias.defined();
  at::Tensor bias = has_bias ? b.c_attn.bias.narrow(0, part * d + hs.begin, hs.size) : at::Tensor();  // [dh] view
  const at::Tensor m64 = f64(m, w);
  at::Tensor mbar = m64;  // diag(1/r_h)·M·diag(r_h): entry (i, j) = M_ij·r_j/r_i
  if (const at::Tensor r = g.row_scale(d); r.defined()) {
    const at::Tensor rh = f64(r.narrow(0, hs.begin, hs.size), w);
    mbar = m64.mul(rh.unsqueeze(0)).div(rh.unsqueeze(1));
  }
  w.copy_(at::mm(mbar, f64(w, w)));
  if (has_bias) bias.copy_(at::mv(m64, f64(bias, bias)));
}

void transform_head_out_columns(Block& b, HeadSlice hs, const at::Tensor& m) {
  check_square(m, hs, "transform_head_out_columns");
  at::NoGradGuard no_grad;
  at::Tensor w = b.attn_proj.weight.narrow(1, hs.begin, hs.size);  // W̄_O[:, h] [d, dh] view
  const at::Tensor m64 = f64(m, w);
  at::Tensor mbar = m64;  // diag(c_h)·M·diag(1/c_h): entry (i, j) = c_i·M_ij/c_j (row scales of O commute)
  if (const at::Tensor& c = b.attn_proj.groups[0].c; c.defined()) {
    const at::Tensor ch = f64(c.narrow(0, hs.begin, hs.size), w);
    mbar = m64.mul(ch.unsqueeze(1)).div(ch.unsqueeze(0));
  }
  w.copy_(at::mm(f64(w, w), mbar));
}

void apply_qk_gauge(Block& b, HeadSlice hs, const at::Tensor& s) {
  check_square(s, hs, "apply_qk_gauge");
  const at::Tensor s64 = s.to(at::kDouble);
  transform_head_rows(b, LrmSite::q, hs, s64.t());              // W_q·S   ⇔ rows ← Sᵀ·rows
  transform_head_rows(b, LrmSite::k, hs, at::linalg_inv(s64));  // W_k·S⁻ᵀ ⇔ rows ← S⁻¹·rows
}

void apply_vo_gauge(Block& b, HeadSlice hs, const at::Tensor& c) {
  check_square(c, hs, "apply_vo_gauge");
  const at::Tensor c64 = c.to(at::kDouble);
  transform_head_rows(b, LrmSite::v, hs, c64.t());                // W_v·C   ⇔ rows ← Cᵀ·rows
  transform_head_out_columns(b, hs, at::linalg_inv(c64).t());    // C⁻¹·W_o ⇔ columns ← columns·C⁻ᵀ
}

void rescale_qk_multipliers(Block& b, const at::Tensor& g) {
  at::Tensor bq = b.c_attn.bias.defined() ? b.b_q() : at::Tensor();  // b_Q, b_K move with their rows when they exist
  at::Tensor bk = b.c_attn.bias.defined() ? b.b_k() : at::Tensor();
  at::Tensor rq = required(b.q().r, "rescale_qk_multipliers"), rk = required(b.k().r, "rescale_qk_multipliers");
  rescale_qk_pair(rq, rk, bq, bk, g);
}

void rescale_vo_multipliers(Block& b, const at::Tensor& g) {
  at::NoGradGuard no_grad;
  const at::Tensor gg = g.to(b.c_attn.weight.device(), b.c_attn.weight.scalar_type());
  required(b.v().r, "rescale_vo_multipliers").mul_(gg);
  if (b.c_attn.bias.defined()) b.b_v().mul_(gg);
  required(b.attn_proj.groups[0].c, "rescale_vo_multipliers").div_(gg);
}

void rescale_ln_columns(Block& b, int which_ln, const at::Tensor& g) {
  if (which_ln != 1 && which_ln != 2) throw std::invalid_argument("rescale_ln_columns: which_ln must be 1 or 2");
  at::NoGradGuard no_grad;
  const at::Tensor gg = g.to(b.c_attn.weight.device(), b.c_attn.weight.scalar_type());
  if (which_ln == 1) {
    for (LrmLinear::Group* grp : {&b.q(), &b.k(), &b.v()}) required(grp->c, "rescale_ln_columns");
    b.ln_1_weight.mul_(gg);
    if (b.ln_1_bias.defined()) b.ln_1_bias.mul_(gg);
    for (LrmLinear::Group* grp : {&b.q(), &b.k(), &b.v()}) grp->c.div_(gg);
  } else {
    required(b.c_fc.groups[0].c, "rescale_ln_columns");
    b.ln_2_weight.mul_(gg);
    if (b.ln_2_bias.defined()) b.ln_2_bias.mul_(gg);
    b.c_fc.groups[0].c.div_(gg);
  }
}

}  // namespace gaugelab::gpt2
