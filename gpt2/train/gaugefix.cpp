#include "gpt2/train/gaugefix.hpp"

#include <stdexcept>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/log.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/stack.h>

#include "gpt2/model/head_gauge.hpp"

namespace gaugelab::gpt2 {

bool has_qk_row_multipliers(const ModelConfig& c) {
  return lrm_has_row(c.lrm[LrmSite::q]) && lrm_has_row(c.lrm[LrmSite::k]);
}

namespace {

void require_rows(const GPT& model, const char* what) {
  if (!has_qk_row_multipliers(model.config()))
    throw std::runtime_error(std::string(what) + ": needs row multipliers on q and k (placement '" +
                             model.config().lrm.spec() + "')");
}

// RMS over each head's slice of r [d] -> [H].
at::Tensor head_rms(const at::Tensor& r, std::int64_t heads) {
  return r.detach().view({heads, -1}).square().mean(1).sqrt();
}

// x ↦ x·a on the [d] slice of a state tensor, a [H] expanded per head; power 1 or 2.
void scale_slice(at::Tensor& t, const at::Tensor& a, std::int64_t heads, int power) {
  if (!t.defined()) return;
  t.view({heads, -1}).mul_((power == 1 ? a : a.square()).unsqueeze(1));
}

void transport(const at::Tensor& param, std::int64_t offset, std::int64_t d, const at::Tensor& a_weights,
               std::int64_t heads, core::TransportMode mode, const MomentLookup& lookup) {
  AdamMoments st = lookup(param);
  // vector: m·a, v·a² (moves like the weights); covector: m/a, v/a² (moves like the gradients).
  const at::Tensor a = mode == core::TransportMode::vector ? a_weights : a_weights.reciprocal();
  if (st.m.defined()) {
    at::Tensor m = st.m.narrow(0, offset, d);
    scale_slice(m, a, heads, 1);
  }
  if (st.v.defined()) {
    at::Tensor v = st.v.narrow(0, offset, d);
    scale_slice(v, a, heads, 2);
  }
}

}  // namespace

QkScales qk_head_scales(const GPT& model) {
  require_rows(model, "qk_head_scales");
  const std::int64_t H = model.config().n_head;
  std::vector<at::Tensor> sq, sk;
  for (const Block& b : model.h) {
    sq.push_back(head_rms(b.c_attn.groups[0].r, H));
    sk.push_back(head_rms(b.c_attn.groups[1].r, H));
  }
  return {at::stack(sq), at::stack(sk)};
}

DriftValues qk_drift(const QkScales& s) {
  const at::Tensor d = at::abs(at::log(s.s_q.to(at::kDouble) / s.s_k.to(at::kDouble)));  // [L, H]
  const at::Tensor both = at::stack({d.max(), d.mean()}).cpu();
  return {both[0].item<double>(), both[1].item<double>()};
}

at::Tensor gauge_fix(GPT& model, double eps, core::TransportMode mode, const MomentLookup& lookup) {
  require_rows(model, "gauge_fix");
  if (mode != core::TransportMode::none && !lookup)
    throw std::invalid_argument("gauge_fix: state transport needs the optimizer's moments");
  at::NoGradGuard no_grad;
  const std::int64_t H = model.config().n_head, d = model.config().n_embd;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    at::Tensor r_q = b.q().r, r_k = b.k().r;  // [d] each
    const at::Tensor g = ((head_rms(r_q, H) + eps) / (head_rms(r_k, H) + eps)).sqrt();  // [H]
    const at::Tensor inv = g.reciprocal();
    // The move itself is the Q/K multiplier pairing of head_gauge.hpp (r_Q/g, b_Q/g, r_K·g, b_K·g),
    // with one g per head spread over the head's d/H coordinates.
    rescale_qk_multipliers(b, g.repeat_interleave(d / H));
    if (mode != core::TransportMode::none) {
      transport(r_q, 0, d, inv, H, mode, lookup);
      transport(r_k, 0, d, g, H, mode, lookup);
      if (b.c_attn.bias.defined()) {
        transport(b.c_attn.bias, 0, d, inv, H, mode, lookup);
        transport(b.c_attn.bias, d, d, g, H, mode, lookup);
      }
    }
    gs.push_back(g);
  }
  return at::stack(gs);
}

at::Tensor gauge_fix_coordinates(GPT& model, double eps) {
  require_rows(model, "gauge_fix_coordinates");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    const at::Tensor g = ((b.q().r.abs() + eps) / (b.k().r.abs() + eps)).sqrt();  // [d]
    rescale_qk_multipliers(b, g);
    gs.push_back(g);
  }
  return at::stack(gs);
}

bool has_vo_multipliers(const ModelConfig& c) {
  return lrm_has_row(c.lrm[LrmSite::v]) && lrm_has_column(c.lrm[LrmSite::attn_out]);
}

at::Tensor gauge_fix_vo(GPT& model, double eps) {
  if (!has_vo_multipliers(model.config()))
    throw std::runtime_error("gauge_fix_vo: needs row multipliers on v and column multipliers on attn_out (placement '" +
                             model.config().lrm.spec() + "')");
  at::NoGradGuard no_grad;
  const std::int64_t H = model.config().n_head, d = model.config().n_embd;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    const at::Tensor g = ((head_rms(b.attn_proj.groups[0].c, H) + eps) / (head_rms(b.v().r, H) + eps)).sqrt();  // [H]
    rescale_vo_multipliers(b, g.repeat_interleave(d / H));
    gs.push_back(g);
  }
  return at::stack(gs);
}

std::int64_t cap_qk_product(GPT& model, double cap) {
  require_rows(model, "cap_qk_product");
  at::NoGradGuard no_grad;
  const std::int64_t H = model.config().n_head, d = model.config().n_embd;
  std::vector<at::Tensor> capped;
  for (Block& b : model.h) {
    const at::Tensor p = head_rms(b.q().r, H) * head_rms(b.k().r, H);  // [H] s_Q·s_K
    const at::Tensor f = (cap / p).clamp_max(1.0).sqrt();              // [H], 1 where under the cap
    capped.push_back((p > cap).sum());
    const at::Tensor per_coord = f.repeat_interleave(d / H);           // [d]
    b.q().r.mul_(per_coord);
    b.k().r.mul_(per_coord);
    if (b.c_attn.bias.defined()) {
      b.b_q().mul_(per_coord);
      b.b_k().mul_(per_coord);
    }
  }
  return at::stack(capped).sum().item<std::int64_t>();
}

}  // namespace gaugelab::gpt2
