// The relu toy's hand-written GD step against the core's reference formulas, and its rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/gauge_fix_relu.hpp"
#include "core/relu_gauge.hpp"
#include "toys/relu_toy.hpp"

using namespace gaugelab;

namespace {

// Finite differences of a loss that is smooth away from ReLU kinks: central step h gives
// O(h²) ≈ 1e-10 truncation; 1e-6 relative leaves room for kinks crossed by no sample.
constexpr double kFdStep = 1e-5;
constexpr double kFdRelTol = 1e-6;
// Same formula, different summation order: agreement to a few ulps of O(1) sums.
constexpr double kSameFormulaTol = 1e-12;

double core_loss(const core::ReluNet<double>& n, const toys::ReluData& d, double lambda, double eps) {
  const core::Mat<double> x = d.x_train;  // [N, 1]
  const core::Mat<double> f = core::relu_forward(n, x);
  const double mse = (f.col(0) - d.y_train).squaredNorm() / static_cast<double>(d.x_train.size());
  return mse + lambda * core::soft_gauge_penalty(n, eps);
}

}  // namespace

TEST_CASE("relu toy: loss and gradient equal the core reference (MSE + lambda*G)", "[toys][relu]") {
  for (double lambda : {0.0, 0.2}) {
    toys::ReluToyOptions o;
    o.lambda = lambda;
    o.hidden = 7;
    o.n_train = 50;
    core::Rng rng(42);
    const auto data = toys::make_relu_data(o, rng);
    const auto net = toys::init_relu_net(o, rng);
    toys::ReluTrainer tr(o, data, net);
    const auto l = tr.evaluate();
    CHECK(std::fabs(l.total - core_loss(net, data, lambda, o.eps)) < kSameFormulaTol);

    // Penalty part against core::soft_gauge_penalty_gradient, task part by finite differences.
    const auto g = tr.grad();
    const int h = o.hidden;
    const auto pg = core::soft_gauge_penalty_gradient(net, o.eps);
    auto perturbed = [&](int k, double delta) {
      auto n = net;
      if (k < h) n.W1(k, 0) += delta;
      else if (k < 2 * h) n.b1(k - h) += delta;
      else if (k < 3 * h) n.W2(0, k - 2 * h) += delta;
      else n.b2(0) += delta;
      return core_loss(n, data, lambda, o.eps);
    };
    for (int k = 0; k < 3 * h + 1; ++k) {
      const double fd = (perturbed(k, kFdStep) - perturbed(k, -kFdStep)) / (2 * kFdStep);
      INFO("lambda " << lambda << " parameter " << k << " analytic " << g[k] << " fd " << fd);
      CHECK(std::fabs(g[k] - fd) <= kFdRelTol * std::max(1.0, std::fabs(fd)));
    }
    if (lambda > 0) {
      // Remove the task gradient (lambda = 0 trainer) and compare the remainder with the core.
      toys::ReluToyOptions o0 = o;
      o0.lambda = 0;
      toys::ReluTrainer t0(o0, data, net);
      t0.evaluate();
      const auto g0 = t0.grad();
      for (int i = 0; i < h; ++i) {
        CHECK(std::fabs((g[i] - g0[i]) - lambda * pg.dW1(i, 0)) < kSameFormulaTol);
        CHECK(std::fabs((g[2 * h + i] - g0[2 * h + i]) - lambda * pg.dW2(0, i)) < kSameFormulaTol);
      }
    }
  }
}

TEST_CASE("relu toy: 200 random gauges leave the trained function invariant to 1e-15 (fp64)", "[toys][relu]") {
  toys::ReluToyOptions o;
  o.steps = 500;
  const auto run = toys::run_relu_seed(o, 3);
  const auto& dinv = run.arrays.front().second;
  REQUIRE(dinv.size() == 200);
  for (double d : dinv) CHECK(d <= 1e-15);
}

TEST_CASE("relu toy: runs are a pure function of the seed", "[toys][relu]") {
  toys::ReluToyOptions o;
  o.steps = 200;
  const auto a = toys::run_relu_seed(o, 5), b = toys::run_relu_seed(o, 5), c = toys::run_relu_seed(o, 6);
  CHECK(a.series_of("train_mse") == b.series_of("train_mse"));
  CHECK(a.series_of("train_mse") != c.series_of("train_mse"));
}

TEST_CASE("stability rule: diverged, oscillating, stable; seeds aggregate", "[toys][relu]") {
  toys::ReluToyOptions o;  // late 20 %, rise fraction 5 %
  std::vector<double> mono(100), osc(100), blow(100);
  for (int t = 0; t < 100; ++t) {
    mono[t] = 1.0 / (1 + t);
    osc[t] = 1.0 + ((t % 2) ? 0.1 : 0.0);
    blow[t] = t < 50 ? 1.0 : NAN;
  }
  CHECK(toys::classify_run(mono, o) == "stable");
  CHECK(toys::classify_run(osc, o) == "oscillating");
  CHECK(toys::classify_run(blow, o) == "diverged");
  CHECK(toys::classify_seeds({"stable", "stable"}) == "stable");
  CHECK(toys::classify_seeds({"stable", "stable", "oscillating"}) == "marginal");
  CHECK(toys::classify_seeds({"stable", "diverged"}) == "unstable");
}

TEST_CASE("relu toy: too large a learning rate diverges and is labelled so", "[toys][relu]") {
  toys::ReluToyOptions o;
  o.lr = 5.0;
  o.steps = 300;
  const auto run = toys::run_relu_seed(o, 0);
  for (const auto& [k, v] : run.metrics)
    if (k == "stability") CHECK(std::get<std::string>(v) == "diverged");
}
