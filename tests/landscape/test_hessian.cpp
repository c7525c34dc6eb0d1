// The loss Hessian tools (gpt2/landscape/hessian.hpp) on a model small enough to form H densely, in
// float64: Hessian-vector products against central differences of the gradient; Lanczos against a dense
// eigendecomposition of H and of P·H·P; Prop. 9's identity vᵀHv = −∇L·a along orbit tangents; the
// horizontal projection orthogonal to every orbit tangent and idempotent; under a random element of the
// attention gauge group the top eigenvalue of H moves while that of the gauge-covariant M^{-1/2}·H·M^{-1/2}
// does not.
#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <Eigen/Eigenvalues>

#include "core/gauge_lie.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/landscape/hessian.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"  // last: puts Catch's CHECK back over c10's
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
using at::Tensor;

namespace {

/// 1 layer, 2 heads of d/2, d 8 (or 4 where H is formed densely: 468 parameters), vocabulary 20, context 6,
/// biases, no multipliers; weights large enough (N(0, 0.5)) that attention is far from uniform. float64.
std::unique_ptr<gpt2::GPT> tiny_model(std::uint64_t seed, std::int64_t d = 8) {
  gpt2::ModelConfig c = gpt2::ModelConfig::preset("nano");
  c.n_layer = 1, c.n_head = 2, c.n_embd = d, c.vocab_size = 20, c.vocab_multiple = 4, c.block_size = 6;
  c.lrm = gpt2::LrmPlacement::none();
  auto m = std::make_unique<gpt2::GPT>(c, seed);
  test::randomize_role(*m, gpt2::ParamRole::matrix, seed + 1, 0.5);
  test::randomize_role(*m, gpt2::ParamRole::embedding, seed + 2, 0.5);
  test::randomize_biases_norms(*m, seed + 3);
  gpt2::convert_parameters(*m, at::kDouble);
  return m;
}

struct Batch {
  Tensor idx, targets;
};
Batch batch(std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const Tensor ids = at::randint(20, {3, 7}, gen, at::TensorOptions().dtype(at::kLong));
  return {ids.narrow(1, 0, 6), ids.narrow(1, 1, 6)};
}

core::Mat<double> dense(const gpt2::LossHessian& h, const std::function<Tensor(const Tensor&)>& op) {
  const std::int64_t n = h.dim();
  core::Mat<double> m(n, n);
  for (std::int64_t j = 0; j < n; ++j) {
    Tensor e = at::zeros({n}, at::TensorOptions().dtype(at::kDouble));
    e[j] = 1.0;
    const Tensor col = op(e).contiguous();
    m.col(j) = Eigen::Map<const core::Vec<double>>(col.data_ptr<double>(), n);
  }
  return (m + m.transpose()) / 2;
}

double top_dense(const core::Mat<double>& m) {
  return Eigen::SelfAdjointEigenSolver<core::Mat<double>>(m, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
}

double dot_f64(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

}  // namespace

TEST_CASE("Hessian-vector products equal central differences of the gradient", "[landscape][hessian]") {
  auto m = tiny_model(1);
  const Batch b = batch(2);
  const gpt2::LossHessian h(*m, b.idx, b.targets);
  const Tensor theta = h.flat_parameters();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  for (int k = 0; k < 3; ++k) {
    const Tensor v = at::randn({h.dim()}, gen, at::TensorOptions().dtype(at::kDouble));
    const double eps = 1e-5;
    auto grad_at = [&](double s) {
      auto mm = tiny_model(1);
      {
        at::NoGradGuard no_grad;
        const Tensor shifted = theta + s * v;
        std::int64_t i = 0;
        mm->visit([&](const std::string&, Tensor& t, gpt2::ParamRole) {
          t.copy_(shifted.narrow(0, h.offsets()[static_cast<std::size_t>(i)], t.numel()).view(t.sizes()));
          ++i;
        });
      }
      return gpt2::LossHessian(*mm, b.idx, b.targets).gradient();
    };
    const Tensor fd = (grad_at(eps) - grad_at(-eps)) / (2 * eps);
    const Tensor hv = h.hvp(v);
    // central differences in float64: O(eps²) truncation and O(1e-16/eps) rounding, ~1e-10 relative
    CHECK((hv - fd).norm().item<double>() / hv.norm().item<double>() < 1e-6);
  }
}

TEST_CASE("Lanczos reaches the dense top eigenvalues of H and of P·H·P", "[landscape][hessian][alone]") {
  auto m = tiny_model(4, 4);
  const Batch b = batch(5);
  const gpt2::LossHessian h(*m, b.idx, b.targets);
  using Op = std::function<Tensor(const Tensor&)>;
  const Op full = [&](const Tensor& v) { return h.hvp(v); };
  const Op quot = [&](const Tensor& v) {
    return gpt2::horizontal_projection(*m, h, h.hvp(gpt2::horizontal_projection(*m, h, v)));
  };
  for (const Op& f : {full, quot}) {
    std::int64_t products = 0;
    const std::vector<double> ev = gpt2::top_eigenvalues(h.dim(), f, 2, products, 1e-10);
    const double want = top_dense(dense(h, f));
    CHECK(std::abs(ev.front() - want) < 1e-7 * std::abs(want));
    CHECK(products > 0);
  }
}

TEST_CASE("Prop. 9's identity along orbit tangents, and the horizontal projection", "[landscape][hessian]") {
  auto m = tiny_model(6);
  const Batch b = batch(7);
  const gpt2::LossHessian h(*m, b.idx, b.targets);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  for (std::int64_t head = 0; head < 2; ++head) {
    const Tensor x = at::randn({4, 4}, gen, f64), y = at::randn({4, 4}, gen, f64);
    const gpt2::OrbitJet j = gpt2::head_orbit_jet(*m, h, 0, head, x, y);
    const double vhv = dot_f64(j.tangent, h.hvp(j.tangent)), ga = dot_f64(h.gradient(), j.acceleration);
    INFO("head " << head << ": vHv " << vhv << ", grad.a " << ga);
    CHECK(std::abs(ga) > 1e-6);                                            // away from a critical point...
    CHECK(std::abs(vhv + ga) < 1e-9 * (std::abs(vhv) + std::abs(ga)));  // ...the curvature is -grad.a
    CHECK(std::abs(dot_f64(h.gradient(), j.tangent)) < 1e-10 * h.gradient().norm().item<double>() *
                                                         j.tangent.norm().item<double>());  // Prop. 38: grad ⟂ orbit
    const Tensor r = at::randn({h.dim()}, gen, f64);
    const Tensor pr = gpt2::horizontal_projection(*m, h, r);
    CHECK(std::abs(dot_f64(pr, j.tangent)) < 1e-10 * pr.norm().item<double>() * j.tangent.norm().item<double>());
    CHECK((gpt2::horizontal_projection(*m, h, pr) - pr).norm().item<double>() < 1e-10 * pr.norm().item<double>());
  }
}

TEST_CASE("the orbit tangent of one head equals the core's head_orbit_tangent on the same weights", "[landscape][hessian]") {
  // head_orbit_jet writes ξ·θ in torch's layout into the flat parameter vector; core::head_orbit_tangent is
  // the reference in the row-vector convention. Same head, same (X, Y): every block must agree, the other
  // head's blocks and every other parameter must stay 0. float64 on O(1) matrices of size ≤ 8: ~1e-14.
  auto m = tiny_model(12);
  const Batch b = batch(13);
  const gpt2::LossHessian h(*m, b.idx, b.targets);
  const std::int64_t d = 8, dh = 4;
  auto segment = [&](const std::string& name) {
    for (std::size_t i = 0; i < h.names().size(); ++i)
      if (h.names()[i] == name) return i;
    FAIL("no parameter " << name);
    return std::size_t{0};
  };
  const std::size_t iw = segment("h.0.attn.c_attn.weight"), ib = segment("h.0.attn.c_attn.bias"),
                    ip = segment("h.0.attn.c_proj.weight");
  auto view = [&](const Tensor& flat, std::size_t i, at::IntArrayRef shape) {
    const std::int64_t n = (i + 1 < h.offsets().size() ? h.offsets()[i + 1] : h.dim()) - h.offsets()[i];
    return flat.narrow(0, h.offsets()[i], n).view(shape);
  };
  // Head `hd` of (w [3d, d], bias [3d], proj [d, d]) in the core's convention (as in model/head_projection).
  auto core_head = [&](const Tensor& w, const Tensor& bias, const Tensor& p, std::int64_t hd) {
    auto rows = [&](std::int64_t s) { return gpt2::to_mat(w.narrow(0, s * d + hd * dh, dh)).transpose().eval(); };
    auto bv = [&](std::int64_t s) { return core::RowVec<double>(gpt2::to_vec(bias.narrow(0, s * d + hd * dh, dh)).transpose()); };
    return core::AttentionHead<double>{rows(0), rows(1), rows(2), gpt2::to_mat(p.narrow(1, hd * dh, dh)).transpose(),
                                       bv(0), bv(1), bv(2)};
  };
  const Tensor theta = h.flat_parameters();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(14);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  for (std::int64_t head = 0; head < 2; ++head) {
    const Tensor x = at::randn({dh, dh}, gen, f64), y = at::randn({dh, dh}, gen, f64);
    const Tensor t = gpt2::head_orbit_jet(*m, h, 0, head, x, y).tangent;
    const auto want = core::head_orbit_tangent(
        core_head(view(theta, iw, {3 * d, d}), view(theta, ib, {3 * d}), view(theta, ip, {d, d}), head),
        core::HeadAlgebra<double>{gpt2::to_mat(x), gpt2::to_mat(y)});
    const auto got = core_head(view(t, iw, {3 * d, d}), view(t, ib, {3 * d}), view(t, ip, {d, d}), head);
    INFO("head " << head);
    CHECK((got.W_q - want.W_q).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.W_k - want.W_k).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.W_v - want.W_v).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.W_o - want.W_o).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.b_q - want.b_q).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.b_k - want.b_k).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((got.b_v - want.b_v).cwiseAbs().maxCoeff() < 1e-12);
    CHECK(want.W_q.cwiseAbs().maxCoeff() > 1e-3);  // a non-trivial tangent
    // Everything outside this head's blocks is 0: the tangent's norm is that of its blocks.
    const double in_head = want.W_q.squaredNorm() + want.W_k.squaredNorm() + want.W_v.squaredNorm() +
                           want.W_o.squaredNorm() + want.b_q.squaredNorm() + want.b_k.squaredNorm() +
                           want.b_v.squaredNorm();
    CHECK(std::abs(t.square().sum().item<double>() - in_head) < 1e-10 * in_head);
  }
}

TEST_CASE("under a random gauge the top eigenvalue of H moves and the gauge-covariant one does not", "[landscape][hessian]") {
  auto m = tiny_model(9);
  const Batch b = batch(10);
  auto spectra = [&](gpt2::GPT& model) {
    const gpt2::LossHessian h(model, b.idx, b.targets);
    std::int64_t products = 0;
    const double full = gpt2::top_eigenvalues(h.dim(), [&](const Tensor& v) { return h.hvp(v); }, 1, products, 1e-10)[0];
    const double metric = gpt2::top_eigenvalues(
        h.dim(),
        [&](const Tensor& v) { return gpt2::metric_inverse_sqrt(model, h, h.hvp(gpt2::metric_inverse_sqrt(model, h, v))); },
        1, products, 1e-10)[0];
    return std::make_pair(full, metric);
  };
  const auto before = spectra(*m);
  core::Rng rng(11);
  core::LayerGauge<double> g;
  for (int i = 0; i < 2; ++i) {
    g.s.push_back(core::random_gl<double>(rng, 4, 10.0));
    g.c.push_back(core::random_gl<double>(rng, 4, 10.0));
  }
  g.perm = core::random_permutation(rng, 2);
  gpt2::apply_layer_gauge(*m, 0, g);
  const auto after = spectra(*m);
  INFO("full " << before.first << " -> " << after.first << ", metric " << before.second << " -> " << after.second);
  CHECK(std::abs(after.first - before.first) > 1e-3 * before.first);
  CHECK(std::abs(after.second - before.second) < 1e-7 * before.second);
}

TEST_CASE("the twice-differentiable attention is the fused kernel's function", "[landscape][hessian]") {
  auto m = tiny_model(12);
  const Batch b = batch(13);
  at::NoGradGuard no_grad;
  const Tensor fused = gpt2::model_logits(*m, b.idx);
  m->set_twice_differentiable(true);
  const Tensor math = gpt2::model_logits(*m, b.idx);
  m->set_twice_differentiable(false);
  CHECK((math - fused).abs().max().item<double>() < 1e-12 * fused.abs().max().item<double>());
}

}  // namespace GAUGELAB_TU
