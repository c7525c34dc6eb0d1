// The relu toy's hand-written GD step against the core's reference formulas, and its rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/gauge_fix_relu.hpp"
#include "core/relu_gauge.hpp"
#include "toys/relu_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

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
  // H = 7 runs the dynamic kernel, H = 20 the fixed-size one; n = 50 leaves a partial sample block.
  for (const auto& [hidden, lambda] : {std::pair{7, 0.0}, std::pair{7, 0.2}, std::pair{20, 0.0}, std::pair{20, 0.2}}) {
    toys::ReluToyOptions o;
    o.lambda = lambda;
    o.hidden = hidden;
    o.init = "torch";  // O(1) weights: every neuron active on part of the data, gradients O(1)
    o.n_train = 50;
    core::Rng rng(42);
    const auto data = toys::make_relu_data(o, rng);
    const auto net = toys::init_relu_net(o, rng);
    toys::ReluTrainer tr(o, data, net);
    CHECK(tr.fixed_size() == (hidden == 20));
    const auto l = tr.evaluate();
    CHECK(std::fabs(l.total - core_loss(net, data, lambda, o.eps)) < kSameFormulaTol);

    // Task part by finite differences (the lambda = 0 trainer's gradient); penalty part, the
    // remainder, against core::soft_gauge_penalty_gradient exactly (its 1/n² curvature near a small
    // weight would swamp a finite difference).
    const auto g = tr.grad();
    const int h = o.hidden;
    toys::ReluToyOptions o0 = o;
    o0.lambda = 0;
    toys::ReluTrainer t0(o0, data, net);
    t0.evaluate();
    const auto g0 = t0.grad();
    auto perturbed = [&](int k, double delta) {
      auto n = net;
      if (k < h) n.W1(k, 0) += delta;
      else if (k < 2 * h) n.b1(k - h) += delta;
      else if (k < 3 * h) n.W2(0, k - 2 * h) += delta;
      else n.b2(0) += delta;
      return core_loss(n, data, 0.0, o.eps);
    };
    for (int k = 0; k < 3 * h + 1; ++k) {
      const double fd = (perturbed(k, kFdStep) - perturbed(k, -kFdStep)) / (2 * kFdStep);
      INFO("H " << h << " parameter " << k << " analytic " << g0[k] << " fd " << fd);
      CHECK(std::fabs(g0[k] - fd) <= kFdRelTol * std::max(1.0, std::fabs(fd)));
    }
    const auto pg = core::soft_gauge_penalty_gradient(net, o.eps);
    for (int i = 0; i < h; ++i) {
      INFO("H " << h << " lambda " << lambda << " neuron " << i);
      CHECK(std::fabs((g[i] - g0[i]) - lambda * pg.dW1(i, 0)) < kSameFormulaTol);
      CHECK(std::fabs((g[2 * h + i] - g0[2 * h + i]) - lambda * pg.dW2(0, i)) < kSameFormulaTol);
      CHECK(g[h + i] == g0[h + i]);  // G does not depend on b1
    }
  }
}

TEST_CASE("relu toy: the fixed-size kernel (H = 20) and the dynamic one agree step for step", "[toys][relu]") {
  toys::ReluToyOptions o;
  o.lambda = 0.2;
  o.n_train = 37;  // not a multiple of the 8-sample block
  core::Rng rng(9);
  const auto data = toys::make_relu_data(o, rng);
  const auto net = toys::init_relu_net(o, rng);
  toys::ReluKernel<20>::Setup s20{data.x_train.data(), data.y_train.data(), data.x_val.data(), data.y_val.data(),
                                  data.x_train.size(), data.x_val.size(), o.lr, o.lambda, o.eps};
  toys::ReluKernel<Eigen::Dynamic>::Setup sd{s20.x_train, s20.y_train, s20.x_val, s20.y_val,
                                             s20.n_train, s20.n_val, o.lr, o.lambda, o.eps};
  const core::Vec<double> w1 = net.W1.col(0), w2 = net.W2.row(0).transpose();
  toys::ReluKernel<20> fixed(s20, w1.data(), net.b1.data(), w2.data(), net.b2(0), 20);
  toys::ReluKernel<Eigen::Dynamic> dyn(sd, w1.data(), net.b1.data(), w2.data(), net.b2(0), 20);
  for (int t = 0; t < 50; ++t) {
    const auto a = fixed.evaluate(), b = dyn.evaluate();
    INFO("step " << t);
    CHECK(std::fabs(a.total - b.total) < kSameFormulaTol);
    const auto ga = fixed.grad(), gb = dyn.grad();
    for (size_t k = 0; k < ga.size(); ++k) CHECK(std::fabs(ga[k] - gb[k]) < kSameFormulaTol);
    fixed.descend();
    dyn.descend();
  }
  CHECK(std::fabs(fixed.val_mse() - dyn.val_mse()) < kSameFormulaTol);
  CHECK(std::fabs(fixed.penalty() - dyn.penalty()) < kSameFormulaTol);
}

TEST_CASE("relu toy: --data-seed shares one data set across seeds; -1 draws one per seed", "[toys][relu]") {
  toys::ReluToyOptions o;
  o.steps = 1;
  o.save_data = true;
  auto x_of = [](const toys::ToyRun& r) {
    for (const auto& [k, v] : r.arrays)
      if (k == "x_train") return v;
    return std::vector<double>{};
  };
  CHECK(x_of(toys::run_relu_seed(o, 1)) == x_of(toys::run_relu_seed(o, 2)));
  o.data_seed = -1;
  CHECK(x_of(toys::run_relu_seed(o, 1)) != x_of(toys::run_relu_seed(o, 2)));
  CHECK(x_of(toys::run_relu_seed(o, 1)).size() == static_cast<size_t>(o.n_train));
}

TEST_CASE("relu toy: 200 random gauges leave the trained function invariant to 1e-15 (fp64)", "[toys][relu]") {
  // The default protocol (outputs ~1e-2) and nn.Linear's init trained to a fit (outputs O(1)): the
  // round-off of f scales with |f|, so the O(1) net is the stricter case.
  for (const char* init : {"small", "torch"}) {
    toys::ReluToyOptions o;
    o.init = init;
    o.steps = 2000;
    const auto run = toys::run_relu_seed(o, 3);
    const auto& dinv = run.arrays.front().second;
    INFO("init " << init);
    REQUIRE(dinv.size() == 200);
    for (double d : dinv) CHECK(d <= 1e-15);
  }
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

TEST_CASE("relu toy: the summary's means leave diverged seeds out and say how many entered", "[toys][relu]") {
  toys::ReluToyOptions good;
  good.steps = 200;
  toys::ReluToyOptions bad = good;
  bad.lr = 5.0;  // diverges (the case above)
  const std::vector<toys::ToyRun> runs = {toys::run_relu_seed(good, 1), toys::run_relu_seed(bad, 2),
                                          toys::run_relu_seed(good, 3)};
  const auto summary = toys::make_relu_toy()->summarize(runs);
  auto get = [&](const std::string& key) -> io::Cell {
    for (const auto& [k, v] : summary)
      if (k == key) return v;
    FAIL("no summary key " << key);
    return io::Cell{};
  };
  const double expect = 0.5 * (runs[0].metric("final_train_mse") + runs[2].metric("final_train_mse"));
  CHECK(std::get<double>(get("final_train_mse_mean")) == Approx(expect).epsilon(1e-12));
  CHECK(std::get<std::int64_t>(get("seeds_in_means")) == 2);
  CHECK(std::get<std::int64_t>(get("seeds_diverged")) == 1);
}
