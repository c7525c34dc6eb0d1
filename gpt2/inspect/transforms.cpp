#include "gpt2/inspect/transforms.hpp"

#include <cmath>
#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/cat.h>

#include "core/gauge_sampling.hpp"
#include "gpt2/model/head_gauge.hpp"
#include "gpt2/inspect/checks.hpp"
#include "gpt2/inspect/layer_tensors.hpp"

namespace gaugelab::gpt2::inspect {

namespace core = gaugelab::core;
using core::Index;

namespace {

template <class T>
core::AttentionLayer<T> cast_layer(const core::AttentionLayer<double>& l) {
  core::AttentionLayer<T> o;
  o.n_heads = l.n_heads;
  o.W_q = l.W_q.cast<T>();
  o.W_k = l.W_k.cast<T>();
  o.W_v = l.W_v.cast<T>();
  o.W_o = l.W_o.cast<T>();
  o.b_q = l.b_q.cast<T>();
  o.b_k = l.b_k.cast<T>();
  o.b_v = l.b_v.cast<T>();
  o.b_o = l.b_o.cast<T>();
  return o;
}

// Score and attention-output errors of one layer, evaluated in T.
template <class T>
void layer_errors(const core::AttentionLayer<double>& orig, const core::AttentionLayer<double>& moved,
                  const core::Permutation& perm, const core::Mat<double>& x, double& score, double& attn) {
  const core::AttentionLayer<T> a = cast_layer<T>(orig), b = cast_layer<T>(moved);
  const core::Mat<T> xt = x.cast<T>();  // [T, d]
  attn = relative_error(core::layer_output(a, xt, {true}), core::layer_output(b, xt, {true}));
  double diff2 = 0, ref2 = 0;  // all heads' scores as one stacked tensor
  for (Index j = 0; j < b.n_heads; ++j) {
    const core::Mat<double> sa = core::head_logits(core::head(a, perm[static_cast<std::size_t>(j)]), xt).template cast<double>();
    const core::Mat<double> sb = core::head_logits(core::head(b, j), xt).template cast<double>();
    diff2 += (sb - sa).squaredNorm();
    ref2 += sa.squaredNorm();
  }
  score = std::sqrt(diff2) / (std::sqrt(ref2) + 0x1.0p-23);
}

}  // namespace

TransformErrors compare(const GPT& moved, const Reference& ref, const std::vector<core::Permutation>& perms) {
  at::NoGradGuard no_grad;
  TransformErrors e;
  for (std::size_t l = 0; l < ref.layers.size(); ++l) {
    const core::AttentionLayer<double> m = attention_layer(moved, static_cast<std::int64_t>(l));
    double s = 0, a = 0;
    if (ref.fp64) layer_errors<double>(ref.layers[l], m, perms[l], ref.probe_inputs[l], s, a);
    else layer_errors<float>(ref.layers[l], m, perms[l], ref.probe_inputs[l], s, a);
    e.score.push_back(s);
    e.attn.push_back(a);
  }
  const at::Tensor y = model_logits(moved, ref.prompts).to(at::kCPU, at::kDouble);
  const at::Tensor y0 = ref.logits.to(at::kCPU, at::kDouble);
  e.logit = y.sub(y0).norm().item<double>() / (y0.norm().item<double>() + 0x1.0p-23);
  return e;
}

core::LayerGauge<double> random_valid_gauge(core::Rng& rng, std::int64_t heads, std::int64_t d_k, std::int64_t d_v,
                                            double perturbation) {
  core::LayerGauge<double> g;
  for (std::int64_t i = 0; i < heads; ++i) {
    g.s.push_back(core::near_orthogonal<double>(rng, d_k, perturbation));
    g.c.push_back(core::near_orthogonal<double>(rng, d_v, perturbation));
  }
  g.perm = core::random_permutation(rng, heads);
  return g;
}

void apply_invalid(GPT& model, InvalidFamily family, core::Rng& rng, double kappa) {
  const std::int64_t dh = model.config().head_dim();
  // W·M in the row-vector convention is rows ← Mᵀ·rows in the model's [out, in] layout.
  auto rows_t = [&](const core::Mat<double>& m) { return to_tensor(m.transpose()); };
  for (Block& b : model.h) {
    for (std::int64_t i = 0; i < model.config().n_head; ++i) {
      const HeadSlice hs = model.head_slice(i);
      const core::Mat<double> a = core::random_gl<double>(rng, dh, kappa);
      switch (family) {
        case InvalidFamily::asym_qk:
          transform_head_rows(b, LrmSite::q, hs, rows_t(a));
          transform_head_rows(b, LrmSite::k, hs, rows_t(core::random_gl<double>(rng, dh, kappa)));
          break;
        case InvalidFamily::wrong_inverse:
          transform_head_rows(b, LrmSite::q, hs, rows_t(a));
          transform_head_rows(b, LrmSite::k, hs, rows_t(a));
          break;
        case InvalidFamily::vo_mismatch:
          transform_head_rows(b, LrmSite::v, hs, rows_t(a));
          break;
      }
    }
  }
}

at::Tensor greedy_decode(const GPT& model, const at::Tensor& prompts, std::int64_t n) {
  at::NoGradGuard no_grad;
  if (prompts.size(1) + n > model.config().block_size)
    throw std::invalid_argument("greedy_decode: prompt plus continuation exceed the context");
  at::Tensor seq = prompts;
  for (std::int64_t t = 0; t < n; ++t) {
    const at::Tensor last = last_logits(model, seq);  // [P, vocab]
    seq = at::cat({seq, last.argmax(-1, /*keepdim=*/true)}, 1);
  }
  return seq.narrow(1, prompts.size(1), n);
}

Exactness exactness(const GPT& model, const Reference& ref, const at::Tensor& ref_greedy) {
  at::NoGradGuard no_grad;
  Exactness e;
  const at::Tensor d = model_logits(model, ref.prompts).to(at::kDouble).sub(ref.logits.to(at::kDouble)).abs();
  e.mean_abs_logit_diff = d.mean().item<double>();
  e.max_abs_logit_diff = d.max().item<double>();
  const at::Tensor g = greedy_decode(model, ref.prompts, ref_greedy.size(1));
  const at::Tensor same = g.eq(ref_greedy);  // [P, n]
  e.token_match = same.to(at::kDouble).mean().item<double>();
  e.greedy_match = same.all(1).to(at::kDouble).mean().item<double>();
  return e;
}

}  // namespace gaugelab::gpt2::inspect
