// GaugeFix on the model's tensors (gpt2/train/gaugefix.hpp) against the core's reference math
// (core/gauge_fix_lrm.hpp, core/coordinates.hpp, core/transport.hpp), and its exactness: logits
// before and after a fix agree to float32 rounding.
#include <cmath>
#include <map>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn_like.h>
#include <ATen/ops/zeros_like.h>

#include "core/coordinates.hpp"
#include "core/gauge_fix_lrm.hpp"
#include "core/transport.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"

using namespace gaugelab;

namespace {

// Agreement of float32 tensor code with the float64 core: a few float32 roundings of O(1) values.
constexpr double kCoreAgreement = 1e-6;
// Logits before/after a fix: each W_eff entry is rounded once more in float32 (relative 6e-8), and a
// logit sums d of them; 2e-5 relative to the largest logit is ~100 float32 ulps and far below any
// real change (a wrong factor on one head moves logits by O(1e-1)).
constexpr double kLogitRounding = 2e-5;

core::Vec<double> to_vec(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  core::Vec<double> v(c.numel());
  for (std::int64_t i = 0; i < c.numel(); ++i) v(i) = c.data_ptr<double>()[i];
  return v;
}

double max_abs_diff(const at::Tensor& t, const core::Vec<double>& v) {
  return (to_vec(t) - v).cwiseAbs().maxCoeff();
}

// Relative to the largest reference entry (second moments reach ~10 here).
double max_rel_err(const at::Tensor& t, const core::Vec<double>& v) {
  return max_abs_diff(t, v) / v.cwiseAbs().maxCoeff();
}

// Nano model (2 layers, 2 heads) with random multipliers, biases and unequal Q/K scales.
std::unique_ptr<gpt2::GPT> skewed_model(std::uint64_t seed) {
  auto m = std::make_unique<gpt2::GPT>(test::nano_config(), seed);
  test::randomize_multipliers(*m, seed + 1);
  test::randomize_biases_norms(*m, seed + 2);
  at::NoGradGuard no_grad;
  for (gpt2::Block& b : m->h) b.q().r.mul_(2.5);  // a clear Q/K imbalance in every head
  return m;
}

core::QkMultipliers<double> core_qk(gpt2::Block& b, std::int64_t heads) {
  return {heads, to_vec(b.q().r), to_vec(b.k().r), to_vec(b.b_q()), to_vec(b.b_k())};
}

}  // namespace

TEST_CASE("gaugefix: scales and drift agree with core lrm_head_scales and lrm_drift") {
  auto m = skewed_model(11);
  const std::int64_t H = m->config().n_head;
  const gpt2::QkScales s = gpt2::qk_head_scales(*m);
  std::vector<core::HeadScales<double>> ref;
  for (std::size_t l = 0; l < m->h.size(); ++l) {
    ref.push_back(core::lrm_head_scales(core_qk(m->h[l], H)));
    CHECK(max_abs_diff(s.s_q[static_cast<std::int64_t>(l)], ref.back().s_q) < kCoreAgreement);
    CHECK(max_abs_diff(s.s_k[static_cast<std::int64_t>(l)], ref.back().s_k) < kCoreAgreement);
  }
  const core::DriftStats d_ref = core::lrm_drift(ref);
  const gpt2::DriftValues d = gpt2::qk_drift(s);
  CHECK(d_ref.max > 0.5);  // the skew is visible
  CHECK(std::abs(d.max - d_ref.max) < kCoreAgreement);
  CHECK(std::abs(d.mean - d_ref.mean) < kCoreAgreement);
}

TEST_CASE("gaugefix: multipliers and biases after the fix agree with core gauge_fix") {
  auto m = skewed_model(21);
  const std::int64_t H = m->config().n_head;
  std::vector<core::GaugeFixResult<double>> ref;
  for (gpt2::Block& b : m->h) ref.push_back(core::gauge_fix(core_qk(b, H), core::GaugeFixOptions{1e-12}));
  const at::Tensor g = gpt2::gauge_fix(*m, 1e-12);  // [L, H]
  for (std::size_t l = 0; l < m->h.size(); ++l) {
    gpt2::Block& b = m->h[l];
    CHECK(max_abs_diff(g[static_cast<std::int64_t>(l)], ref[l].g) < kCoreAgreement);
    CHECK(max_abs_diff(b.q().r, ref[l].multipliers.r_q) < kCoreAgreement);
    CHECK(max_abs_diff(b.k().r, ref[l].multipliers.r_k) < kCoreAgreement);
    CHECK(max_abs_diff(b.b_q(), ref[l].multipliers.b_q) < kCoreAgreement);
    CHECK(max_abs_diff(b.b_k(), ref[l].multipliers.b_k) < kCoreAgreement);
  }
  // After the fix the drift is float32 noise (seed 000 Table 2 reports ~3.5e-7 at N = 1).
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(*m)).max < 1e-6);
}

TEST_CASE("gaugefix: logits before and after a fix agree to float32 rounding") {
  auto m = skewed_model(31);
  const at::Tensor idx = at::randint(0, m->config().vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  const at::Tensor before = m->logits(idx);
  gpt2::gauge_fix(*m, 1e-12);
  const at::Tensor after = m->logits(idx);
  CHECK(test::max_rel_diff(after, before) < kLogitRounding);

  // Without the biases the move is not exact: scaling only r changes the logits visibly.
  auto m2 = skewed_model(31);
  const at::Tensor g = gpt2::gauge_fix(*m2, 1e-12);
  for (std::size_t l = 0; l < m2->h.size(); ++l) {  // undo the bias part only
    const at::Tensor gl = g[static_cast<std::int64_t>(l)].repeat_interleave(m2->config().head_dim());
    m2->h[l].b_q().mul_(gl);
    m2->h[l].b_k().div_(gl);
  }
  CHECK(test::max_rel_diff(m2->logits(idx), before) > 10 * kLogitRounding);
}

TEST_CASE("gaugefix: Adam state transport agrees with core transport_state under the diagonal gauge") {
  for (const core::TransportMode mode : {core::TransportMode::vector, core::TransportMode::covector}) {
    auto m = skewed_model(41);
    const std::int64_t H = m->config().n_head, d = m->config().n_embd;
    gpt2::Block& b = m->h[0];
    // Moments for r_Q, r_K and c_attn.bias, positive second moments.
    std::map<const void*, gpt2::AdamMoments> state;
    for (at::Tensor* p : {&b.q().r, &b.k().r, &b.c_attn.bias})
      state[p->unsafeGetTensorImpl()] = {at::randn_like(*p), at::randn_like(*p).square() + 0.1};
    for (std::size_t l = 1; l < m->h.size(); ++l)
      for (at::Tensor* p : {&m->h[l].q().r, &m->h[l].k().r, &m->h[l].c_attn.bias})
        state[p->unsafeGetTensorImpl()] = {at::zeros_like(*p), at::zeros_like(*p)};
    auto lookup = [&](const at::Tensor& p) { return state.at(p.unsafeGetTensorImpl()); };
    const gpt2::AdamMoments rq = state[b.q().r.unsafeGetTensorImpl()], rk = state[b.k().r.unsafeGetTensorImpl()];
    // The core's transport on [1, n] row vectors: r_Q moves right by S = diag(1/g), r_K by diag(g).
    core::RuleState<double> sq, sk;
    sq.moment1 = to_vec(rq.m).transpose(), sq.moment2 = to_vec(rq.v).transpose();
    sk.moment1 = to_vec(rk.m).transpose(), sk.moment2 = to_vec(rk.v).transpose();
    const core::Vec<double> g_ref = core::gauge_fix_factors(core_qk(b, H), core::GaugeFixOptions{1e-12});
    core::Vec<double> g_coord(d);  // [d] the head's factor on each of its coordinates
    for (std::int64_t i = 0; i < d; ++i) g_coord(i) = g_ref(i / (d / H));
    core::TransportOptions to{mode, false};
    core::transport_state(sq, core::Mat<double>(g_coord.cwiseInverse().asDiagonal()), core::GaugeSide::right, to);
    core::transport_state(sk, core::Mat<double>(g_coord.asDiagonal()), core::GaugeSide::right, to);
    const gpt2::AdamMoments bias = state[b.c_attn.bias.unsafeGetTensorImpl()];
    const at::Tensor bias_m_before = bias.m.clone();
    gpt2::gauge_fix(*m, 1e-12, mode, lookup);
    CHECK(max_rel_err(rq.m, sq.moment1.transpose()) < kCoreAgreement);
    CHECK(max_rel_err(rq.v, sq.moment2.transpose()) < kCoreAgreement);
    CHECK(max_rel_err(rk.m, sk.moment1.transpose()) < kCoreAgreement);
    CHECK(max_rel_err(rk.v, sk.moment2.transpose()) < kCoreAgreement);
    // The bias state's Q slice moves like r_Q's (same factors), its V slice not at all.
    CHECK(bias.m.narrow(0, 2 * d, d).equal(bias_m_before.narrow(0, 2 * d, d)));
    CHECK(bias.m.narrow(0, 0, d).equal(bias_m_before.narrow(0, 0, d)) == false);
  }
}

TEST_CASE("gaugefix: a model without biases (nanoGPT's bias=False) is fixed exactly and its drift becomes 0") {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = false;
  gpt2::GPT m(c, 41);
  test::randomize_multipliers(m, 42);
  {
    at::NoGradGuard no_grad;
    for (gpt2::Block& b : m.h) b.q().r.mul_(2.5);
  }
  const at::Tensor idx = at::randint(0, c.vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  at::NoGradGuard no_grad;
  const at::Tensor before = m.logits(idx);
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(m)).max > 0.5);  // log 2.5 and more
  gpt2::gauge_fix(m, 1e-12);
  CHECK(test::max_rel_diff(m.logits(idx), before) < kLogitRounding);
  CHECK(gpt2::qk_drift(gpt2::qk_head_scales(m)).max < 1e-6);
}
