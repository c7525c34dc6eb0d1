// Gauge invariance of the GPT-2 model (seed 001 head gauges, seed 000/002 multiplier pairings), moves
// outside the group, and refusals. Agreement of the tensor gauge moves with the core's reference math
// on the same inputs is in the parity table (tests/parity/parity_rows_gauge.cpp).
#include <cmath>
#include <memory>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include "gpt2/model/head_gauge.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::max_rel_diff;
using gaugelab::test::nano_config;

namespace {

// Logits after an exact gauge move, in float32: weights are stored back in float32 (6e-8 relative
// per entry) and the gauges have condition numbers of a few, so the logits move by ~1e-6 at most.
constexpr double kInvariantTol = 1e-5;
// A move outside the group (S on both Q and K) changes attention itself: errors of order 1e-1.
constexpr double kBrokenAtLeast = 1e-2;

at::Generator gen(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }
const auto kF64 = at::TensorOptions().dtype(at::kDouble);

// I + spread·N(0,1)/√n: eigenvalues in a disc of radius ≈ spread around 1, so invertible for spread < 1.
at::Tensor random_gl(std::int64_t n, double spread, at::Generator& g) {
  return at::eye(n, kF64).add(at::randn({n, n}, g, kF64).mul(spread / std::sqrt(static_cast<double>(n))));
}
at::Tensor random_positive(std::int64_t n, double spread, at::Generator& g) {
  return at::randn({n}, g, kF64).mul(spread).exp();
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

TEST_CASE("gauge moves refuse placements without the multipliers they need", "[gpt2][gauge]") {
  ModelConfig c = nano_config();
  c.lrm = LrmPlacement::none();
  GPT m(c, 1);
  const at::Tensor ones = at::ones({c.n_embd}, kF64);
  CHECK_THROWS_WITH(rescale_qk_multipliers(m.h[0], ones), Catch::Contains("not in this placement"));
  CHECK_THROWS_WITH(rescale_ln_columns(m.h[0], 2, ones), Catch::Contains("not in this placement"));
  CHECK_THROWS(apply_qk_gauge(m.h[0], m.head_slice(0), at::eye(3, kF64)));
}

}  // namespace GAUGELAB_TU
