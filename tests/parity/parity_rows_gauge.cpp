// The tensor gauge moves of a GPT-2 block (gpt2/model/head_gauge.hpp) against the core's reference math
// on the same inputs: per-head Q/K and V/O gauges (core/attention_layer.hpp apply_layer_gauge) and the
// three multiplier pairings (core/lrm_gauge.hpp). Moved here from tests/gpt2/test_gauge.cpp (which keeps
// the invariance of the logits, the moves outside the group, and the refusals).
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include "core/attention_layer.hpp"
#include "core/lrm_gauge.hpp"
#include "gpt2/model/head_gauge.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// Logits after an exact gauge move, in float32: weights are stored back in float32 (6e-8 relative
// per entry) and the gauges have condition numbers of a few, so the logits move by ~1e-6 at most.
constexpr double kInvariantTol = 1e-5;
// Tensor moves vs the core's float64 reference: the same formula, differing by float32 storage of
// the moved weights (2^-24 relative) amplified by the gauge's condition number.
constexpr double kCoreTol = 1e-6;

const auto kF64 = at::TensorOptions().dtype(at::kDouble);

// I + spread·N(0,1)/√n: eigenvalues in a disc of radius ≈ spread around 1, so invertible for spread < 1.
at::Tensor random_gl(std::int64_t n, double spread, at::Generator& g) {  // on the CPU
  return at::eye(n, kF64).add(at::randn({n, n}, g, kF64).mul(spread / std::sqrt(static_cast<double>(n))));
}
at::Tensor random_positive(std::int64_t n, double spread, at::Generator& g) {  // on the CPU
  return at::randn({n}, g, kF64).mul(spread).exp();
}

double rel(const core::Mat<double>& a, const core::Mat<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

struct Setup {
  std::unique_ptr<gpt2::GPT> model;
  at::Tensor idx, ref;
};
Setup make_setup(std::uint64_t seed, c10::Device device) {
  Setup s;
  s.model = std::make_unique<gpt2::GPT>(test::nano_config(), seed);  // default placement: rows+columns on Q, K, V, O, MLP
  // Weights N(0, 1/d) instead of the 0.02 init: attention logits of order 1, so attention is far from
  // uniform and a move that changes q·k shows in the output (at init it would barely register).
  test::randomize_role(*s.model, gpt2::ParamRole::matrix, seed + 3,
                       1.0 / std::sqrt(static_cast<double>(test::nano_config().n_embd)));
  test::randomize_multipliers(*s.model, seed + 1);
  test::randomize_biases_norms(*s.model, seed + 2);
  s.model->to(device);
  auto gen = cpu_generator(seed + 4);
  s.idx = at::randint(0, test::nano_config().vocab_size, {2, 24}, gen, at::TensorOptions().dtype(at::kLong)).to(device);
  at::NoGradGuard no_grad;
  s.ref = s.model->logits(s.idx);
  return s;
}
double moved(Setup& s) {
  at::NoGradGuard no_grad;
  return test::max_rel_diff(s.model->logits(s.idx), s.ref);
}

// Was TEST_CASE "tensor head gauges agree with core::apply_layer_gauge".
double head_gauges(c10::Device device) {
  Setup s = make_setup(400, device);
  auto g = cpu_generator(401);
  gpt2::GPT& m = *s.model;
  gpt2::Block& b = m.h[1];
  const std::int64_t d = m.config().n_embd, H = m.config().n_head, dh = m.config().head_dim();
  auto layer_of = [&](gpt2::Block& blk) {  // the core's row-vector layout of the effective weights
    const at::Tensor w = blk.c_attn.effective_weight(), bias = blk.c_attn.bias;
    core::AttentionLayer<double> l;
    l.n_heads = H;
    l.W_q = gpt2::to_mat(w.narrow(0, 0, d).t());
    l.W_k = gpt2::to_mat(w.narrow(0, d, d).t());
    l.W_v = gpt2::to_mat(w.narrow(0, 2 * d, d).t());
    l.W_o = gpt2::to_mat(blk.attn_proj.effective_weight().t());
    l.b_q = gpt2::to_vec(bias.narrow(0, 0, d)).transpose();
    l.b_k = gpt2::to_vec(bias.narrow(0, d, d)).transpose();
    l.b_v = gpt2::to_vec(bias.narrow(0, 2 * d, d)).transpose();
    l.b_o = gpt2::to_vec(blk.attn_proj.bias).transpose();
    return l;
  };
  const core::AttentionLayer<double> before = layer_of(b);
  std::vector<core::Mat<double>> ss, cs;
  for (std::int64_t h = 0; h < H; ++h) {
    const at::Tensor sh = random_gl(dh, 0.5, g), ch = random_gl(dh, 0.5, g);
    ss.push_back(gpt2::to_mat(sh));
    cs.push_back(gpt2::to_mat(ch));
    gpt2::apply_qk_gauge(b, m.head_slice(h), sh);
    gpt2::apply_vo_gauge(b, m.head_slice(h), ch);
  }
  const core::AttentionLayer<double> want = core::apply_layer_gauge(before, ss, cs);
  const core::AttentionLayer<double> got = layer_of(b);
  return std::max({rel(got.W_q, want.W_q), rel(got.W_k, want.W_k), rel(got.W_v, want.W_v), rel(got.W_o, want.W_o),
                   rel(got.b_q, want.b_q), rel(got.b_k, want.b_k), rel(got.b_v, want.b_v)});
}

// Was TEST_CASE "tensor multiplier pairings agree with core/lrm_gauge.hpp".
double multiplier_pairings(c10::Device device) {
  Setup s = make_setup(500, device);
  auto g = cpu_generator(501);
  gpt2::Block& b = s.model->h[0];
  const std::int64_t d = s.model->config().n_embd;
  const at::Tensor gq = random_positive(d, 0.5, g), gv = random_positive(d, 0.5, g), gl = random_positive(d, 0.5, g);
  double err = 0;

  core::QkMultipliers<double> qk{s.model->config().n_head, gpt2::to_vec(b.q().r), gpt2::to_vec(b.k().r),
                                 gpt2::to_vec(b.b_q()), gpt2::to_vec(b.b_k())};
  const auto qk_want = core::rescale_qk_multipliers_per_coordinate(qk, gpt2::to_vec(gq));
  gpt2::rescale_qk_multipliers(b, gq);
  err = std::max({err, rel(gpt2::to_vec(b.q().r), qk_want.r_q), rel(gpt2::to_vec(b.k().r), qk_want.r_k),
                  rel(gpt2::to_vec(b.b_q()), qk_want.b_q), rel(gpt2::to_vec(b.b_k()), qk_want.b_k)});

  core::VoMultipliers<double> vo{s.model->config().n_head, gpt2::to_vec(b.v().r), gpt2::to_vec(b.b_v()),
                                 gpt2::to_vec(b.attn_proj.groups[0].c)};
  const auto vo_want = core::rescale_vo_multipliers(vo, gpt2::to_vec(gv));
  gpt2::rescale_vo_multipliers(b, gv);
  err = std::max({err, rel(gpt2::to_vec(b.v().r), vo_want.r_v), rel(gpt2::to_vec(b.b_v()), vo_want.b_v),
                  rel(gpt2::to_vec(b.attn_proj.groups[0].c), vo_want.c_o)});

  core::LnColumnPairing<double> ln{gpt2::to_vec(b.ln_1_weight), gpt2::to_vec(b.ln_1_bias),
                                   {gpt2::to_vec(b.q().c), gpt2::to_vec(b.k().c), gpt2::to_vec(b.v().c)}};
  const auto ln_want = core::rescale_ln_columns(ln, gpt2::to_vec(gl));
  gpt2::rescale_ln_columns(b, 1, gl);
  err = std::max({err, rel(gpt2::to_vec(b.ln_1_weight), ln_want.gain), rel(gpt2::to_vec(b.ln_1_bias), ln_want.bias),
                  rel(gpt2::to_vec(b.q().c), ln_want.next_columns[0]), rel(gpt2::to_vec(b.v().c), ln_want.next_columns[2])});
  // The three pairings together leave the logits unchanged (kInvariantTol: see there).
  const double logits_moved = moved(s);
  require_side(logits_moved < kInvariantTol,
               "the pairings moved the logits by " + std::to_string(logits_moved) + " (relative), over 1e-5");
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> gauge_rows() {
  using namespace GAUGELAB_TU;
  const char* why =
      "the same formula, differing by float32 storage of the moved weights (2^-24 relative) amplified by the "
      "gauge's condition number";
  return {
      {"gpt2::apply_qk_gauge, gpt2::apply_vo_gauge (every head of layer 1)", "core::apply_layer_gauge",
       "nano H=2 d=64 dh=32; W_q W_k W_v [d, d], W_o [d, d], b_q b_k b_v [d]; S, C [dh, dh] (max-abs, relative)",
       "float32 vs float64", kCoreTol, why, &head_gauges},
      {"gpt2::rescale_qk_multipliers, rescale_vo_multipliers, rescale_ln_columns (ln_1)",
       "core::rescale_qk_multipliers_per_coordinate, core::rescale_vo_multipliers, core::rescale_ln_columns",
       "nano d=64; r, c, b, LayerNorm gain and bias, g [d] (max-abs, relative)", "float32 vs float64", kCoreTol, why,
       &multiplier_pairings},
  };
}

}  // namespace gaugelab::parity
