#include "gpt2/train/gaugefix.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/log.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/head_gauge.hpp"
#include "gpt2/ops/qk_layer.hpp"

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

// The [d] slices of b_Q and b_K (views into c_attn.bias), or undefined without biases.
at::Tensor bias_q(const Block& b) { return b.c_attn.bias.defined() ? b.b_q() : at::Tensor(); }
at::Tensor bias_k(const Block& b) { return b.c_attn.bias.defined() ? b.b_k() : at::Tensor(); }

// The Adam moments of rows [offset, offset + d) of `param` moved with x ↦ x·a (a [H]); mode as
// transport_head_moments (vector: like the weights; covector: like the gradients).
void transport(const at::Tensor& param, std::int64_t offset, std::int64_t d, const at::Tensor& a, std::int64_t heads,
               core::TransportMode mode, const MomentLookup& lookup) {
  AdamMoments st = lookup(param);
  at::Tensor m = st.m.defined() ? st.m.narrow(0, offset, d) : at::Tensor();
  at::Tensor v = st.v.defined() ? st.v.narrow(0, offset, d) : at::Tensor();
  transport_head_moments(m, v, a, heads, mode);
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
    at::Tensor bq = bias_q(b), bk = bias_k(b);
    const at::Tensor g = qk_gauge_fix_layer(b.q().r, b.k().r, bq, bk, H, eps);  // [H]: r_Q/g, b_Q/g, r_K·g, b_K·g
    if (mode != core::TransportMode::none) {
      const at::Tensor inv = g.reciprocal();
      transport(b.q().r, 0, d, inv, H, mode, lookup);
      transport(b.k().r, 0, d, g, H, mode, lookup);
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
  const std::int64_t H = model.config().n_head;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    at::Tensor bv = b.c_attn.bias.defined() ? b.b_v() : at::Tensor();
    gs.push_back(vo_gauge_fix_layer(b.v().r, bv, b.attn_proj.groups[0].c, H, eps));  // [H]: r_V·g, b_V·g, c_O/g
  }
  return at::stack(gs);
}

std::int64_t cap_qk_product(GPT& model, double cap) {
  require_rows(model, "cap_qk_product");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> capped;
  for (Block& b : model.h) {
    at::Tensor bq = bias_q(b), bk = bias_k(b);
    capped.push_back(qk_cap_layer(b.q().r, b.k().r, bq, bk, model.config().n_head, cap));
  }
  return at::stack(capped).sum().item<std::int64_t>();
}

namespace {

// The effective Q and K rows [d, d] of one block (every multiplier merged).
std::pair<at::Tensor, at::Tensor> effective_qk(const Block& b) {
  const at::Tensor w = b.c_attn.effective_weight().detach();  // [3d, d]: Q rows, K rows, V rows
  const std::int64_t d = w.size(1);
  return {w.narrow(0, 0, d), w.narrow(0, d, d)};
}

}  // namespace

at::Tensor qk_effective_log_ratio(const GPT& model) {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> rho;
  for (const Block& b : model.h) {
    const auto [q, k] = effective_qk(b);
    rho.push_back(qk_effective_log_ratio_layer(q, k, model.config().n_head));
  }
  return at::stack(rho);
}

at::Tensor gauge_fix_effective(GPT& model, double eps) {
  require_rows(model, "gauge_fix_effective");
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> gs;
  for (Block& b : model.h) {
    const auto [q, k] = effective_qk(b);
    at::Tensor bq = bias_q(b), bk = bias_k(b);
    gs.push_back(qk_gauge_fix_effective_layer(b.q().r, b.k().r, bq, bk, q, k, model.config().n_head, eps));
  }
  return at::stack(gs);
}

at::Tensor offset_qk_gauge(GPT& model, double sigma, std::uint64_t seed) {
  const ModelConfig& c = model.config();
  if (!(sigma >= 0) || !std::isfinite(sigma)) throw std::invalid_argument("offset_qk_gauge: sigma must be >= 0");
  at::Tensor log_g = at::zeros({c.n_layer, c.n_head}, at::TensorOptions().dtype(at::kDouble));
  if (sigma == 0) return log_g;
  if (!has_qk_row_multipliers(c))
    throw std::invalid_argument("a Q/K gauge offset needs row multipliers on q and k (--multipliers '" +
                                c.lrm.spec() + "' has none)");
  at::NoGradGuard no_grad;
  // Its own stream (the seed mixed with a constant): the weights' draw is the same with and without it.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x9a06e0ff5e7ULL);
  log_g.normal_(0.0, sigma, gen);
  const std::int64_t dh = c.head_dim();
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    // g [d]: the head's factor repeated over its dh coordinates.
    at::Tensor g = log_g[l].exp().repeat_interleave(dh);
    rescale_qk_multipliers(model.h[static_cast<std::size_t>(l)], g);
  }
  return log_g;
}

}  // namespace gaugelab::gpt2
