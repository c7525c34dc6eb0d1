// GaugeFix on the model's tensors (gpt2/train/gaugefix.hpp) against the core's reference math
// (core/gauge_fix_lrm.hpp, core/coordinates.hpp, core/transport.hpp). Moved here from
// tests/train/test_train_gaugefix.cpp, which keeps the exactness checks (logits before and after a fix).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/zeros_like.h>

#include "core/coordinates.hpp"
#include "core/gauge_fix_lrm.hpp"
#include "core/transport.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// Agreement of float32 tensor code with the float64 core: a few float32 roundings of O(1) values.
constexpr double kCoreAgreement = 1e-6;
constexpr const char* kCoreAgreementWhy =
    "float32 tensor code against the float64 core: a few float32 roundings of O(1) values";

double max_abs_diff(const at::Tensor& t, const core::Vec<double>& v) { return (gpt2::to_vec(t) - v).cwiseAbs().maxCoeff(); }

// Relative to the largest reference entry (second moments reach ~10 here).
double max_rel_err(const at::Tensor& t, const core::Vec<double>& v) {
  return max_abs_diff(t, v) / v.cwiseAbs().maxCoeff();
}

// Nano model (2 layers, 2 heads) with random multipliers, biases and unequal Q/K scales, on `device`.
std::unique_ptr<gpt2::GPT> skewed_model(std::uint64_t seed, c10::Device device) {
  auto m = std::make_unique<gpt2::GPT>(test::nano_config(), seed);
  test::randomize_multipliers(*m, seed + 1);
  test::randomize_biases_norms(*m, seed + 2);
  {
    at::NoGradGuard no_grad;
    for (gpt2::Block& b : m->h) b.q().r.mul_(2.5);  // a clear Q/K imbalance in every head
  }
  m->to(device);
  return m;
}

core::QkMultipliers<double> core_qk(gpt2::Block& b, std::int64_t heads) {
  return {heads, gpt2::to_vec(b.q().r), gpt2::to_vec(b.k().r), gpt2::to_vec(b.b_q()), gpt2::to_vec(b.b_k())};
}

// Was TEST_CASE "gaugefix: scales and drift agree with core lrm_head_scales and lrm_drift".
double scales_and_drift(c10::Device device) {
  auto m = skewed_model(11, device);
  const std::int64_t H = m->config().n_head;
  const gpt2::QkScales s = gpt2::qk_head_scales(*m);
  std::vector<core::HeadScales<double>> ref;
  double err = 0;
  for (std::size_t l = 0; l < m->h.size(); ++l) {
    ref.push_back(core::lrm_head_scales(core_qk(m->h[l], H)));
    err = std::max({err, max_abs_diff(s.s_q[static_cast<std::int64_t>(l)], ref.back().s_q),
                    max_abs_diff(s.s_k[static_cast<std::int64_t>(l)], ref.back().s_k)});
  }
  const core::DriftStats d_ref = core::lrm_drift(ref);
  const gpt2::DriftValues d = gpt2::qk_drift(s);
  require_side(d_ref.max > 0.5, "the skew is not visible: core drift max <= 0.5");
  return std::max({err, std::abs(d.max - d_ref.max), std::abs(d.mean - d_ref.mean)});
}

// Was TEST_CASE "gaugefix: multipliers and biases after the fix agree with core gauge_fix".
double fix_multipliers(c10::Device device) {
  auto m = skewed_model(21, device);
  const std::int64_t H = m->config().n_head;
  std::vector<core::GaugeFixResult<double>> ref;
  for (gpt2::Block& b : m->h) ref.push_back(core::gauge_fix(core_qk(b, H), core::GaugeFixOptions{1e-12}));
  const at::Tensor g = gpt2::gauge_fix(*m, 1e-12);  // [L, H]
  double err = 0;
  for (std::size_t l = 0; l < m->h.size(); ++l) {
    gpt2::Block& b = m->h[l];
    err = std::max({err, max_abs_diff(g[static_cast<std::int64_t>(l)], ref[l].g),
                    max_abs_diff(b.q().r, ref[l].multipliers.r_q), max_abs_diff(b.k().r, ref[l].multipliers.r_k),
                    max_abs_diff(b.b_q(), ref[l].multipliers.b_q), max_abs_diff(b.b_k(), ref[l].multipliers.b_k)});
  }
  // After the fix the drift is float32 noise (seed 000 Table 2 reports ~3.5e-7 at N = 1).
  require_side(gpt2::qk_drift(gpt2::qk_head_scales(*m)).max < 1e-6, "the drift after the fix is not below 1e-6");
  return err;
}

// Was TEST_CASE "gaugefix: Adam state transport agrees with core transport_state under the diagonal gauge"
// (one row per mode).
double state_transport(core::TransportMode mode, c10::Device device) {
  auto m = skewed_model(41, device);
  const std::int64_t H = m->config().n_head, d = m->config().n_embd;
  gpt2::Block& b = m->h[0];
  // Moments for r_Q, r_K and c_attn.bias, positive second moments (drawn on the CPU).
  auto gen = cpu_generator(44);
  std::map<const void*, gpt2::AdamMoments> state;
  for (at::Tensor* p : {&b.q().r, &b.k().r, &b.c_attn.bias}) {
    const at::Tensor m1 = randn_on(p->sizes(), gen, at::kFloat, device);
    const at::Tensor m2 = randn_on(p->sizes(), gen, at::kFloat, device).square() + 0.1;
    state[p->unsafeGetTensorImpl()] = {m1, m2};
  }
  for (std::size_t l = 1; l < m->h.size(); ++l)
    for (at::Tensor* p : {&m->h[l].q().r, &m->h[l].k().r, &m->h[l].c_attn.bias})
      state[p->unsafeGetTensorImpl()] = {at::zeros_like(*p), at::zeros_like(*p)};
  auto lookup = [&](const at::Tensor& p) { return state.at(p.unsafeGetTensorImpl()); };
  const gpt2::AdamMoments rq = state[b.q().r.unsafeGetTensorImpl()], rk = state[b.k().r.unsafeGetTensorImpl()];
  // The core's transport on [1, n] row vectors: r_Q moves right by S = diag(1/g), r_K by diag(g).
  core::RuleState<double> sq, sk;
  sq.moment1 = gpt2::to_vec(rq.m).transpose(), sq.moment2 = gpt2::to_vec(rq.v).transpose();
  sk.moment1 = gpt2::to_vec(rk.m).transpose(), sk.moment2 = gpt2::to_vec(rk.v).transpose();
  const core::Vec<double> g_ref = core::gauge_fix_factors(core_qk(b, H), core::GaugeFixOptions{1e-12});
  core::Vec<double> g_coord(d);  // [d] the head's factor on each of its coordinates
  for (std::int64_t i = 0; i < d; ++i) g_coord(i) = g_ref(i / (d / H));
  core::TransportOptions to{mode, false};
  core::transport_state(sq, core::Mat<double>(g_coord.cwiseInverse().asDiagonal()), core::GaugeSide::right, to);
  core::transport_state(sk, core::Mat<double>(g_coord.asDiagonal()), core::GaugeSide::right, to);
  const gpt2::AdamMoments bias = state[b.c_attn.bias.unsafeGetTensorImpl()];
  const at::Tensor bias_m_before = bias.m.clone();
  gpt2::gauge_fix(*m, 1e-12, mode, lookup);
  // The bias state's Q slice moves like r_Q's (same factors), its V slice not at all.
  require_side(bias.m.narrow(0, 2 * d, d).equal(bias_m_before.narrow(0, 2 * d, d)),
               "the V slice of the bias state moved");
  require_side(!bias.m.narrow(0, 0, d).equal(bias_m_before.narrow(0, 0, d)), "the Q slice of the bias state did not move");
  return std::max({max_rel_err(rq.m, sq.moment1.transpose()), max_rel_err(rq.v, sq.moment2.transpose()),
                   max_rel_err(rk.m, sk.moment1.transpose()), max_rel_err(rk.v, sk.moment2.transpose())});
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> gaugefix_rows() {
  using namespace GAUGELAB_TU;
  const char* shapes = "nano L=2 H=2 d=64, r_Q r_K b_Q b_K [d], s_Q s_K g [L, H]";
  return {
      {"gpt2::qk_head_scales, gpt2::qk_drift", "core::lrm_head_scales, core::lrm_drift", shapes,
       "float32 vs float64", kCoreAgreement, kCoreAgreementWhy, &scales_and_drift},
      {"gpt2::gauge_fix (g, r_Q, r_K, b_Q, b_K)", "core::gauge_fix", shapes, "float32 vs float64", kCoreAgreement,
       kCoreAgreementWhy, &fix_multipliers},
      {"gpt2::gauge_fix Adam transport (vector)", "core::transport_state (right, diag(1/g) on r_Q, diag(g) on r_K)",
       "nano d=64, Adam m, v of r_Q, r_K [d] (relative to the largest entry)", "float32 vs float64", kCoreAgreement,
       kCoreAgreementWhy, [](c10::Device dev) { return state_transport(core::TransportMode::vector, dev); }},
      {"gpt2::gauge_fix Adam transport (covector)", "core::transport_state (right, diag(1/g) on r_Q, diag(g) on r_K)",
       "nano d=64, Adam m, v of r_Q, r_K [d] (relative to the largest entry)", "float32 vs float64", kCoreAgreement,
       kCoreAgreementWhy, [](c10::Device dev) { return state_transport(core::TransportMode::covector, dev); }},
  };
}

}  // namespace gaugelab::parity
