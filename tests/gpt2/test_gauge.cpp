// Gauge invariance of the GPT-2 model (seed 001 head gauges, seed 000/002 multiplier pairings) and
// agreement of the tensor gauge moves with the core's reference math on the same inputs.
#include <cmath>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include "core/attention_layer.hpp"
#include "core/lrm_gauge.hpp"
#include "gpt2/model/head_gauge.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there

using namespace gaugelab::gpt2;
namespace core = gaugelab::core;
using gaugelab::test::max_rel_diff;
using gaugelab::test::nano_config;

namespace {

// Logits after an exact gauge move, in float32: weights are stored back in float32 (6e-8 relative
// per entry) and the gauges have condition numbers of a few, so the logits move by ~1e-6 at most.
constexpr double kInvariantTol = 1e-5;
// A move outside the group (S on both Q and K) changes attention itself: errors of order 1e-1.
constexpr double kBrokenAtLeast = 1e-2;
// Tensor moves vs the core's float64 reference: the same formula, differing by float32 storage of
// the moved weights (2^-24 relative) amplified by the gauge's condition number.
constexpr double kCoreTol = 1e-6;

at::Generator gen(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }
const auto kF64 = at::TensorOptions().dtype(at::kDouble);

// I + spread·N(0,1)/√n: eigenvalues in a disc of radius ≈ spread around 1, so invertible for spread < 1.
at::Tensor random_gl(std::int64_t n, double spread, at::Generator& g) {
  return at::eye(n, kF64).add(at::randn({n, n}, g, kF64).mul(spread / std::sqrt(static_cast<double>(n))));
}
at::Tensor random_positive(std::int64_t n, double spread, at::Generator& g) {
  return at::randn({n}, g, kF64).mul(spread).exp();
}

// Tensor [rows, cols] or [n] (any dtype) <-> Eigen double.
core::Mat<double> to_mat(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  core::Mat<double> m(c.size(0), c.size(1));
  for (std::int64_t i = 0; i < c.size(0); ++i)
    for (std::int64_t j = 0; j < c.size(1); ++j) m(i, j) = c.data_ptr<double>()[i * c.size(1) + j];
  return m;
}
core::Vec<double> to_vec(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  return Eigen::Map<const core::Vec<double>>(c.data_ptr<double>(), c.numel());
}
double rel(const core::Mat<double>& a, const core::Mat<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

struct Setup {
  std::unique_ptr<GPT> model;
  at::Tensor idx, ref;
};
Setup make_setup(std::uint64_t seed) {
  Setup s;
  s.model = std::make_unique<GPT>(nano_config(), seed);  // default placement: rows+columns on Q, K, V, O, MLP
  // Weights N(0, 1/d) instead of the 0.02 init: attention logits of order 1, so attention is far from
  // uniform and a move that changes q·k shows in the output (at init it would barely register).
  gaugelab::test::randomize_role(*s.model, ParamRole::matrix, seed + 3, 1.0 / std::sqrt(static_cast<double>(nano_config().n_embd)));
  gaugelab::test::randomize_multipliers(*s.model, seed + 1);
  gaugelab::test::randomize_biases_norms(*s.model, seed + 2);
  s.idx = at::randint(nano_config().vocab_size, {2, 24}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  s.ref = s.model->logits(s.idx);
  return s;
}
double moved(Setup& s) {
  at::NoGradGuard no_grad;
  return max_rel_diff(s.model->logits(s.idx), s.ref);
}

}  // namespace

TEST_CASE("random valid head gauges and multiplier pairings leave the logits unchanged", "[gpt2][gauge]") {
  Setup s = make_setup(100);
  auto g = gen(101);
  GPT& m = *s.model;
  const std::int64_t d = m.config().n_embd, dh = m.config().head_dim();
  for (Block& b : m.h) {
    for (std::int64_t h = 0; h < m.config().n_head; ++h) {
      apply_qk_gauge(b, m.head_slice(h), random_gl(dh, 0.5, g));
      apply_vo_gauge(b, m.head_slice(h), random_gl(dh, 0.5, g));
    }
    rescale_qk_multipliers(b, random_positive(d, 0.5, g));
    rescale_vo_multipliers(b, random_positive(d, 0.5, g));
    rescale_ln_columns(b, 1, random_positive(d, 0.5, g));
    rescale_ln_columns(b, 2, random_positive(d, 0.5, g));
  }
  const double err = moved(s);
  WARN("valid gauges: max relative logit change " << err);
  CHECK(err < kInvariantTol);
  CHECK(!m.h[0].c_attn.weight.equal(GPT(nano_config(), 100).h[0].c_attn.weight));  // the weights did move
}

TEST_CASE("gauge moves outside the group change the logits", "[gpt2][gauge]") {
  SECTION("S on Q and S on K") {
    Setup s = make_setup(200);
    auto g = gen(201);
    const at::Tensor sq = random_gl(s.model->config().head_dim(), 0.5, g);
    transform_head_rows(s.model->h[0], LrmSite::q, s.model->head_slice(1), sq.t());  // W_q·S
    transform_head_rows(s.model->h[0], LrmSite::k, s.model->head_slice(1), sq.t());  // W_k·S (not S⁻ᵀ)
    const double err = moved(s);
    WARN("S on Q and K: " << err);
    CHECK(err > kBrokenAtLeast);
  }
  SECTION("the same multiplier factor on r_Q and r_K") {
    Setup s = make_setup(300);
    auto g = gen(301);
    const at::Tensor f = random_positive(s.model->config().n_embd, 0.5, g).to(at::kFloat);
    at::NoGradGuard no_grad;
    s.model->h[1].q().r.mul_(f);
    s.model->h[1].k().r.mul_(f);
    const double err = moved(s);
    WARN("g on r_Q and r_K: " << err);
    CHECK(err > kBrokenAtLeast);
  }
}

TEST_CASE("tensor head gauges agree with core::apply_layer_gauge", "[gpt2][gauge][core]") {
  Setup s = make_setup(400);
  auto g = gen(401);
  GPT& m = *s.model;
  Block& b = m.h[1];
  const std::int64_t d = m.config().n_embd, H = m.config().n_head, dh = m.config().head_dim();
  auto layer_of = [&](Block& blk) {  // the core's row-vector layout of the effective weights
    const at::Tensor w = blk.c_attn.effective_weight(), bias = blk.c_attn.bias;
    core::AttentionLayer<double> l;
    l.n_heads = H;
    l.W_q = to_mat(w.narrow(0, 0, d).t());
    l.W_k = to_mat(w.narrow(0, d, d).t());
    l.W_v = to_mat(w.narrow(0, 2 * d, d).t());
    l.W_o = to_mat(blk.attn_proj.effective_weight().t());
    l.b_q = to_vec(bias.narrow(0, 0, d)).transpose();
    l.b_k = to_vec(bias.narrow(0, d, d)).transpose();
    l.b_v = to_vec(bias.narrow(0, 2 * d, d)).transpose();
    l.b_o = to_vec(blk.attn_proj.bias).transpose();
    return l;
  };
  const core::AttentionLayer<double> before = layer_of(b);
  std::vector<core::Mat<double>> ss, cs;
  for (std::int64_t h = 0; h < H; ++h) {
    const at::Tensor sh = random_gl(dh, 0.5, g), ch = random_gl(dh, 0.5, g);
    ss.push_back(to_mat(sh));
    cs.push_back(to_mat(ch));
    apply_qk_gauge(b, m.head_slice(h), sh);
    apply_vo_gauge(b, m.head_slice(h), ch);
  }
  const core::AttentionLayer<double> want = core::apply_layer_gauge(before, ss, cs);
  const core::AttentionLayer<double> got = layer_of(b);
  CHECK(rel(got.W_q, want.W_q) < kCoreTol);
  CHECK(rel(got.W_k, want.W_k) < kCoreTol);
  CHECK(rel(got.W_v, want.W_v) < kCoreTol);
  CHECK(rel(got.W_o, want.W_o) < kCoreTol);
  CHECK(rel(got.b_q, want.b_q) < kCoreTol);
  CHECK(rel(got.b_k, want.b_k) < kCoreTol);
  CHECK(rel(got.b_v, want.b_v) < kCoreTol);
}

TEST_CASE("tensor multiplier pairings agree with core/lrm_gauge.hpp", "[gpt2][gauge][core][lrm]") {
  Setup s = make_setup(500);
  auto g = gen(501);
  Block& b = s.model->h[0];
  const std::int64_t d = s.model->config().n_embd;
  const at::Tensor gq = random_positive(d, 0.5, g), gv = random_positive(d, 0.5, g), gl = random_positive(d, 0.5, g);

  core::QkMultipliers<double> qk{s.model->config().n_head, to_vec(b.q().r), to_vec(b.k().r), to_vec(b.b_q()), to_vec(b.b_k())};
  const auto qk_want = core::rescale_qk_multipliers_per_coordinate(qk, to_vec(gq));
  rescale_qk_multipliers(b, gq);
  CHECK(rel(to_vec(b.q().r), qk_want.r_q) < kCoreTol);
  CHECK(rel(to_vec(b.k().r), qk_want.r_k) < kCoreTol);
  CHECK(rel(to_vec(b.b_q()), qk_want.b_q) < kCoreTol);
  CHECK(rel(to_vec(b.b_k()), qk_want.b_k) < kCoreTol);

  core::VoMultipliers<double> vo{s.model->config().n_head, to_vec(b.v().r), to_vec(b.b_v()), to_vec(b.attn_proj.groups[0].c)};
  const auto vo_want = core::rescale_vo_multipliers(vo, to_vec(gv));
  rescale_vo_multipliers(b, gv);
  CHECK(rel(to_vec(b.v().r), vo_want.r_v) < kCoreTol);
  CHECK(rel(to_vec(b.b_v()), vo_want.b_v) < kCoreTol);
  CHECK(rel(to_vec(b.attn_proj.groups[0].c), vo_want.c_o) < kCoreTol);

  core::LnColumnPairing<double> ln{to_vec(b.ln_1_weight), to_vec(b.ln_1_bias),
                                   {to_vec(b.q().c), to_vec(b.k().c), to_vec(b.v().c)}};
  const auto ln_want = core::rescale_ln_columns(ln, to_vec(gl));
  rescale_ln_columns(b, 1, gl);
  CHECK(rel(to_vec(b.ln_1_weight), ln_want.gain) < kCoreTol);
  CHECK(rel(to_vec(b.ln_1_bias), ln_want.bias) < kCoreTol);
  CHECK(rel(to_vec(b.q().c), ln_want.next_columns[0]) < kCoreTol);
  CHECK(rel(to_vec(b.v().c), ln_want.next_columns[2]) < kCoreTol);
  CHECK(moved(s) < kInvariantTol);
}

TEST_CASE("gauge moves refuse placements without the multipliers they need", "[gpt2][gauge]") {
  ModelConfig c = nano_config();
  c.lrm = LrmPlacement::none();
  GPT m(c, 1);
  const at::Tensor ones = at::ones({c.n_embd}, kF64);
  CHECK_THROWS_WITH(rescale_qk_multipliers(m.h[0], ones), Catch::Contains("not in this placement"));
  CHECK_THROWS_WITH(rescale_ln_columns(m.h[0], 2, ones), Catch::Contains("not in this placement"));
  CHECK_THROWS(apply_qk_gauge(m.h[0], m.head_slice(0), at::eye(3, kF64)));
}
