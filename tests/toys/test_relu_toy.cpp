// The relu toy's hand-written GD step against the core's reference formulas, and its rules.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/gauge_fix_relu.hpp"
#include "core/gauge_lie.hpp"
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

TEST_CASE("relu toy: --data-seed shares one data set across seeds, -1 draws one per seed", "[toys][relu]") {
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

TEST_CASE("stability rule: diverged, oscillating, stable, seeds aggregate", "[toys][relu]") {
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

// The GD stability number's ingredient: relu_sharpness (central differences of the kernel's gradient)
// against second differences of the core's loss along the eigenvector it returns — an independent route
// (core::relu_forward, not the kernel). Second differences with h = 1e-5 on a unit direction: truncation
// (h^2/12)·L'''' (at h = 1e-4 it was 7e-5 relative for λ = 0.2, whose log-penalty has 1/n^4 fourth
// derivatives at a small weight) plus cancellation ε·L/h² ≈ 1e-6 absolute; kinks crossed by no sample
// at this h (torch init, O(1) weights). 1e-5 relative; a random direction's Rayleigh quotient stays below.
TEST_CASE("relu toy: the Hessian's top eigenvalue matches second differences of the core loss", "[toys][relu][sharpness]") {
  for (const double lambda : {0.0, 0.2}) {
    toys::ReluToyOptions o;
    o.lambda = lambda;
    o.init = "torch";
    o.n_train = 60;
    core::Rng rng(7);
    const auto data = toys::make_relu_data(o, rng);
    const auto net = toys::init_relu_net(o, rng);
    std::vector<double> u;
    const double top = toys::relu_sharpness(o, data, net, true, &u);
    const int h = o.hidden;
    REQUIRE(u.size() == static_cast<size_t>(3 * h + 1));
    auto moved = [&](const std::vector<double>& dir, double t) {
      auto n = net;
      for (int i = 0; i < h; ++i) {
        n.W1(i, 0) += t * dir[i];
        n.b1(i) += t * dir[h + i];
        n.W2(0, i) += t * dir[2 * h + i];
      }
      n.b2(0) += t * dir[3 * h];
      return core_loss(n, data, lambda, o.eps);
    };
    auto curvature = [&](const std::vector<double>& dir) {
      const double step = 1e-5;
      return (moved(dir, step) - 2 * moved(dir, 0) + moved(dir, -step)) / (step * step);
    };
    INFO("lambda " << lambda << " top " << top << " second difference " << curvature(u));
    CHECK(std::fabs(curvature(u) - top) <= 1e-5 * std::fabs(top));
    CHECK(top >= 2.0 - 1e-6);  // ∂²MSE/∂b2² = 2 exactly: the top is at least that
    core::Rng r2(8);
    for (int k = 0; k < 20; ++k) {
      std::vector<double> d(u.size());
      double norm = 0;
      for (auto& x : d) {
        x = core::normal(r2);
        norm += x * x;
      }
      for (auto& x : d) x /= std::sqrt(norm);
      CHECK(curvature(d) <= top * (1 + 1e-5) + 1e-5);
    }
  }
}

// The logged dynamics series (seed 004 eq. 20): with λ = 0 there is no damping (κ = 0) and the balance
// drift over 300 steps is GD's O(lr²) per step; with λ > 0 the linear prediction Δv ≈ lr·v̇ holds to
// O(lr) once the first kicks of the 1/n² stiffness are over (here from step 100 on, relative error < 5 %).
TEST_CASE("relu toy: the eq. 20 series (kappa, forcing, damping, Δv check, balance drift)", "[toys][relu][eq20]") {
  toys::ReluToyOptions o;
  o.lr = 1e-3;
  o.gauges = 0;
  for (const double lambda : {0.0, 0.2}) {
    o.lambda = lambda;
    const auto run = toys::run_relu_seed(o, 3);
    const auto& kappa = run.series_of("kappa_max");
    const auto& damping = run.series_of("damping_max");
    const auto& err = run.series_of("eq20_rel_err");
    const auto& drift = run.series_of("balance_drift");
    REQUIRE(run.steps.size() == kappa.size());
    CHECK(drift.front() == 0.0);
    CHECK(std::isnan(err.back()));  // the final sample takes no step
    for (size_t i = 0; i + 1 < run.steps.size(); ++i) {
      INFO("lambda " << lambda << " step " << run.steps[i]);
      if (lambda == 0.0) {
        CHECK(kappa[i] == 0.0);
        CHECK(damping[i] == 0.0);
        CHECK(drift[i] <= 300 * o.lr * o.lr * 10);  // O(lr²) a step, ≤ 10 × lr² each
      } else {
        CHECK(kappa[i] > 0.0);
        if (run.steps[i] >= 100) CHECK(err[i] < 0.05);
      }
    }
  }
}

// The kernel's allocation-free eq. 20 quantities against the core's reference on the same nets and
// gradients: H = 7 (dynamic kernel) and 20 (fixed), with and without the penalty.
TEST_CASE("relu toy: the kernel's gauge dynamics equal core::gauge_coordinate_rates and relu_balance",
          "[toys][relu][eq20]") {
  for (const auto& [hidden, lambda] : {std::pair{7, 0.0}, std::pair{7, 0.2}, std::pair{20, 0.0}, std::pair{20, 0.3}}) {
    toys::ReluToyOptions o;
    o.lambda = lambda;
    o.hidden = hidden;
    o.eps = 1e-3;
    core::Rng rng(11);
    const auto data = toys::make_relu_data(o, rng);
    const auto net = toys::init_relu_net(o, rng);
    toys::ReluTrainer tr(o, data, net);
    tr.evaluate();
    const auto ref = core::gauge_coordinate_rates(net, tr.grad_net(), lambda, o.eps);
    const core::Vec<double> bal = core::relu_balance(net);
    std::vector<double> v(hidden), kappa(hidden), dv(hidden), c(hidden);
    tr.gauge_dynamics(v.data(), kappa.data(), dv.data(), c.data());
    for (int i = 0; i < hidden; ++i) {
      INFO("H " << hidden << " lambda " << lambda << " neuron " << i);
      CHECK(v[i] == Approx(ref.v(i)).epsilon(1e-13).margin(1e-15));
      CHECK(kappa[i] == Approx(ref.kappa(i)).epsilon(1e-13).margin(1e-15));
      CHECK(dv[i] == Approx(ref.dv_dt(i)).epsilon(1e-12).margin(1e-15));
      CHECK(c[i] == Approx(bal(i)).epsilon(1e-13).margin(1e-15));
    }
  }
}
