#include "toys/relu_toy.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/coordinates.hpp"
#include "core/eigen_products.hpp"
#include "core/gauge_fix_relu.hpp"
#include "core/gauge_sampling.hpp"

namespace gaugelab::toys {

using core::Index;
using core::Vec;

double relu_target(double x) { return std::sin(2.5 * x) + 0.2 * std::cos(6.0 * x) + 0.1 * x; }

ReluData make_relu_data(const ReluToyOptions& o, core::Rng& rng) {
  ReluData d;
  d.x_train.resize(o.n_train);
  d.y_train.resize(o.n_train);
  for (int i = 0; i < o.n_train; ++i) {
    d.x_train(i) = core::uniform(rng, o.train_lo, o.train_hi);
    d.y_train(i) = relu_target(d.x_train(i)) + o.noise_std * core::normal(rng);
  }
  d.x_val.resize(o.n_val);
  d.y_val.resize(o.n_val);
  for (int i = 0; i < o.n_val; ++i) {
    d.x_val(i) = o.val_lo + (o.val_hi - o.val_lo) * i / (o.n_val - 1);
    d.y_val(i) = relu_target(d.x_val(i)) + (o.val_noise ? o.noise_std * core::normal(rng) : 0.0);
  }
  return d;
}

core::ReluNet<double> init_relu_net(const ReluToyOptions& o, core::Rng& rng) {
  const int h = o.hidden;
  core::ReluNet<double> n{core::Mat<double>(h, 1), Vec<double>(h), core::Mat<double>(1, h), Vec<double>(1)};
  if (o.init == "small") {  // every parameter N(0, init_scale²), the hand-written NumPy convention
    for (int i = 0; i < h; ++i) n.W1(i, 0) = o.init_scale * core::normal(rng);
    for (int i = 0; i < h; ++i) n.b1(i) = o.init_scale * core::normal(rng);
    for (int i = 0; i < h; ++i) n.W2(0, i) = o.init_scale * core::normal(rng);
    n.b2(0) = o.init_scale * core::normal(rng);
  } else if (o.init == "torch") {  // nn.Linear: U(±1/√fan_in) for weight and bias
    const double a1 = 1.0, a2 = 1.0 / std::sqrt(static_cast<double>(h));
    for (int i = 0; i < h; ++i) n.W1(i, 0) = core::uniform(rng, -a1, a1);
    for (int i = 0; i < h; ++i) n.b1(i) = core::uniform(rng, -a1, a1);
    for (int i = 0; i < h; ++i) n.W2(0, i) = core::uniform(rng, -a2, a2);
    n.b2(0) = core::uniform(rng, -a2, a2);
  } else if (o.init == "he") {  // He normal weights; kinks -b1/w1 spread over the training interval
    for (int i = 0; i < h; ++i) n.W1(i, 0) = std::sqrt(2.0) * core::normal(rng);
    for (int i = 0; i < h; ++i) n.b1(i) = -n.W1(i, 0) * core::uniform(rng, o.train_lo, o.train_hi);
    for (int i = 0; i < h; ++i) n.W2(0, i) = std::sqrt(2.0 / h) * core::normal(rng);
    n.b2(0) = 0.0;
  } else {
    throw std::invalid_argument("unknown init '" + o.init + "'");
  }
  return n;
}

namespace {

// The paper's width gets the fixed-size kernel; any other width the dynamic one.
constexpr int kFixedWidth = 20;

template <int H>
std::unique_ptr<ReluKernelBase> make_kernel(const ReluToyOptions& o, const ReluData& d,
                                            const core::ReluNet<double>& n) {
  typename ReluKernel<H>::Setup s{d.x_train.data(), d.y_train.data(), d.x_val.data(), d.y_val.data(),
                                  d.x_train.size(), d.x_val.size(), o.lr, o.lambda, o.eps,
                                  o.kernel == "sorted"};
  const core::Vec<double> w1 = n.W1.col(0), w2 = n.W2.row(0).transpose();  // [H]
  return std::make_unique<ReluKernel<H>>(s, w1.data(), n.b1.data(), w2.data(), n.b2(0), n.hidden());
}

}  // namespace

ReluTrainer::ReluTrainer(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& init)
    : h_(static_cast<int>(init.hidden())), fixed_(init.hidden() == kFixedWidth) {
  if (init.input_dim() != 1 || init.output_dim() != 1) throw std::invalid_argument("ReluTrainer: d = m = 1 only");
  if (data.x_train.size() < 1 || data.x_val.size() < 1) throw std::invalid_argument("ReluTrainer: empty data set");
  k_ = fixed_ ? make_kernel<kFixedWidth>(o, data, init) : make_kernel<Eigen::Dynamic>(o, data, init);
}

namespace {

/// A flat w1[H], b1[H], w2[H], b2 vector (the kernel's order) in a net's shapes.
core::ReluNet<double> unflatten(const std::vector<double>& p, int h) {
  core::ReluNet<double> n{core::Mat<double>(h, 1), Vec<double>(h), core::Mat<double>(1, h), Vec<double>(1)};
  for (int i = 0; i < h; ++i) {
    n.W1(i, 0) = p[i];
    n.b1(i) = p[h + i];
    n.W2(0, i) = p[2 * h + i];
  }
  n.b2(0) = p[3 * h];
  return n;
}

/// The inverse of unflatten: w1[H], b1[H], w2[H], b2.
std::vector<double> flatten(const core::ReluNet<double>& n) {
  const Index h = n.hidden();
  std::vector<double> p(static_cast<size_t>(3 * h + 1));
  for (Index i = 0; i < h; ++i) {
    p[i] = n.W1(i, 0);
    p[h + i] = n.b1(i);
    p[2 * h + i] = n.W2(0, i);
  }
  p[3 * h] = n.b2(0);
  return p;
}

}  // namespace

core::ReluNet<double> ReluTrainer::net() const { return unflatten(k_->params(), h_); }
core::ReluNet<double> ReluTrainer::grad_net() const { return unflatten(k_->grad(), h_); }

double relu_sharpness(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& net,
                      bool with_penalty, std::vector<double>* direction) {
  ReluToyOptions oo = o;
  if (!with_penalty) oo.lambda = 0.0;
  const int h = static_cast<int>(net.hidden());
  const std::vector<double> p0 = flatten(net);
  const Index n = static_cast<Index>(p0.size());  // 3H + 1
  core::Mat<double> hess(n, n);                    // [3H+1, 3H+1]
  for (Index j = 0; j < n; ++j) {
    const double step = 1e-5 * std::max(std::abs(p0[j]), 1e-2);
    std::vector<double> plus = p0, minus = p0;
    plus[j] += step;
    minus[j] -= step;
    ReluTrainer tp(oo, data, unflatten(plus, h)), tm(oo, data, unflatten(minus, h));
    tp.evaluate();
    tm.evaluate();
    const std::vector<double> gp = tp.grad(), gm = tm.grad();
    for (Index i = 0; i < n; ++i) hess(i, j) = (gp[i] - gm[i]) / (2 * step);
  }
  if (!hess.allFinite()) return std::numeric_limits<double>::quiet_NaN();
  const core::Mat<double> sym = 0.5 * (hess + hess.transpose());
  const Eigen::SelfAdjointEigenSolver<core::Mat<double>> eig(sym);  // eigenvalues ascending
  if (direction) direction->assign(eig.eigenvectors().col(n - 1).data(), eig.eigenvectors().col(n - 1).data() + n);
  return eig.eigenvalues()(n - 1);
}

std::string classify_run(const std::vector<double>& loss, const ReluToyOptions& o) {
  for (double l : loss)
    if (!std::isfinite(l) || l > o.diverge_loss) return "diverged";
  const size_t n = loss.size();
  const size_t late = std::max<size_t>(2, static_cast<size_t>(std::ceil(o.late_fraction * n)));
  const size_t start = n > late ? n - late : 0;
  size_t rises = 0, pairs = 0;
  for (size_t t = start + 1; t < n; ++t, ++pairs) rises += loss[t] > loss[t - 1] * (1.0 + o.rise_tol);
  return pairs > 0 && static_cast<double>(rises) / pairs > o.oscillation_rise ? "oscillating" : "stable";
}

std::string classify_seeds(const std::vector<std::string>& labels) {
  size_t bad = 0;
  for (const auto& l : labels) bad += l != "stable";
  if (bad == 0) return "stable";
  return 2 * bad >= labels.size() ? "unstable" : "marginal";
}

ToyRun run_relu_seed(const ReluToyOptions& o, std::uint64_t seed,
                     const std::function<void(std::int64_t, const std::vector<double>&)>* sink) {
  // Independent streams for data, init and gauges, so changing --gauges never changes training.
  // --data-seed >= 0: one data set shared by every seed (only the initialisation differs).
  const std::uint64_t data_key = o.data_seed >= 0 ? static_cast<std::uint64_t>(o.data_seed) : seed;
  core::Rng data_rng(data_key * 3 + 0x5eed0001ULL), init_rng(seed * 3 + 0x5eed0002ULL), gauge_rng(seed * 3 + 0x5eed0003ULL);
  const ReluData data = make_relu_data(o, data_rng);
  const core::ReluNet<double> init = init_relu_net(o, init_rng);
  ReluTrainer tr(o, data, init);

  ToyRun run;
  // The gauge coordinate's dynamics at each logged step (seed 004 eq. 20; the kernel's gauge_dynamics,
  // tested against core::gauge_coordinate_rates and core::relu_balance):
  //   kappa_max      max_i κ_i: explicit GD is unstable along neuron i's gauge coordinate once lr·κ_i > 2
  //   forcing_max    max_i |F₁ᵢ − F₂ᵢ| = max_i |v̇_i + κ_i v_i|, the task's push on v
  //   damping_max    max_i κ_i|v_i|, the penalty's pull
  //   eq20_rel_err   max_i |Δv_i − lr·v̇_i| / max_i |lr·v̇_i| over the step taken: how well the flow's eq. 20
  //                  describes finite-step GD (O(lr) when it does; NaN at the final sample, no step taken)
  //   balance_drift  max_i |c_i(t) − c_i(0)|, c_i = ‖w1_i‖² + b1_i² − ‖w2_i‖²: conserved by the task loss's
  //                  gradient flow, so its drift is finite-step GD's (O(lr²) per step) plus the penalty's push
  run.series_names = {"train_mse", "val_mse", "penalty", "max_abs_v", "loss",
                      "kappa_max", "forcing_max", "damping_max", "eq20_rel_err", "balance_drift"};
  run.series.assign(run.series_names.size(), {});
  std::vector<double> loss_per_step;
  loss_per_step.reserve(static_cast<size_t>(o.steps) + 1);
  const size_t h = static_cast<size_t>(o.hidden);
  std::vector<double> v(h), kappa(h), dv_dt(h), balance(h), balance0(h), v_after(h), scratch(3 * h);
  tr.evaluate();  // the balance at step 0 (the gradient is recomputed by step 0 itself)
  tr.gauge_dynamics(v.data(), kappa.data(), dv_dt.data(), balance0.data());
  std::vector<double> v_by_step;  // [logged steps, H] row-major: every neuron's gauge coordinate (--save-data)
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // std::max(a, NaN) is a: a neuron whose numbers went non-finite must show in the maximum, not vanish from it.
  const auto max_keep_nan = [nan](double a, double b) { return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b); };
  // One logged sample at the current parameters, whose loss and gradient `l` holds; with `step_taken`
  // the GD step is taken here too (its Δv checks eq. 20).
  auto sample = [&](std::int64_t step, const ReluTrainer::Loss& l, bool step_taken) {
    tr.gauge_dynamics(v.data(), kappa.data(), dv_dt.data(), balance.data());
    const double val = tr.val_mse(), pen = tr.penalty(), max_v = tr.max_abs_v();
    double eq20 = nan;
    if (step_taken) {
      tr.descend();
      tr.gauge_dynamics(v_after.data(), scratch.data(), scratch.data() + h, scratch.data() + 2 * h);
      double err = 0, ref = 0;
      for (size_t i = 0; i < h; ++i) {
        err = max_keep_nan(err, std::fabs(v_after[i] - v[i] - o.lr * dv_dt[i]));
        ref = max_keep_nan(ref, std::fabs(o.lr * dv_dt[i]));
      }
      eq20 = err / ref;
    }
    double kappa_max = 0, forcing_max = 0, damping_max = 0, drift = 0;
    for (size_t i = 0; i < h; ++i) {
      kappa_max = max_keep_nan(kappa_max, kappa[i]);
      forcing_max = max_keep_nan(forcing_max, std::fabs(dv_dt[i] + kappa[i] * v[i]));
      damping_max = max_keep_nan(damping_max, std::fabs(kappa[i] * v[i]));
      drift = max_keep_nan(drift, std::fabs(balance[i] - balance0[i]));
    }
    run.steps.push_back(step);
    const double vals[] = {l.mse, val, pen, max_v, l.total, kappa_max, forcing_max, damping_max, eq20, drift};
    for (size_t k = 0; k < run.series.size(); ++k) run.series[k].push_back(vals[k]);
    v_by_step.insert(v_by_step.end(), v.begin(), v.end());
    if (sink) (*sink)(step, std::vector<double>(std::begin(vals), std::end(vals)));
  };
  bool diverged = false;
  for (std::int64_t t = 0; t < o.steps; ++t) {
    ReluTrainer::Loss l;  // loss at step t (before its update)
    if (t % o.log_every == 0) {
      l = tr.evaluate();
      sample(t, l, true);
    } else {
      l = tr.step();
    }
    loss_per_step.push_back(l.total);
    if (!std::isfinite(l.total) || l.total > o.diverge_loss) {
      diverged = true;
      break;
    }
  }
  const auto final_loss = tr.evaluate();
  loss_per_step.push_back(final_loss.total);
  sample(diverged ? static_cast<std::int64_t>(loss_per_step.size()) - 1 : o.steps, final_loss, false);

  const std::string label = classify_run(loss_per_step, o);
  // Invariance test (eq. 11): Δ_inv = mean_x |f_θ(x) − f_θ'(x)| over the validation grid.
  std::vector<double> dinv;
  if (!diverged) {
    const core::ReluNet<double> net = tr.net();
    const core::Mat<double> xv = data.x_val;  // [n_val, 1]
    const core::Mat<double> f = core::relu_forward(net, xv);
    for (int g = 0; g < o.gauges; ++g) {
      const auto s = core::random_positive_diagonal<double>(gauge_rng, o.hidden, o.gauge_log_spread);
      const core::Mat<double> fg = core::relu_forward(core::rescale_neurons(net, s), xv);
      dinv.push_back(core::invariance_error(f, fg).mean_abs);
    }
  }
  auto minmax = [&](bool mx) {
    if (dinv.empty()) return nan;
    return mx ? *std::max_element(dinv.begin(), dinv.end()) : *std::min_element(dinv.begin(), dinv.end());
  };
  double best_val = std::numeric_limits<double>::infinity();
  for (double v : run.series_of("val_mse")) best_val = std::min(best_val, v);
  // The MSE of the best constant predictor on each set (the variance of its targets): the floor a
  // net that has not left its small initialisation sits at, for the captions.
  auto variance = [](const Vec<double>& y) { return (y.array() - y.mean()).square().mean(); };
  run.metrics = {{"seed", static_cast<std::int64_t>(seed)},
                 {"const_train_mse", variance(data.y_train)},
                 {"const_val_mse", variance(data.y_val)},
                 {"final_train_mse", final_loss.mse},
                 {"final_val_mse", run.series_of("val_mse").back()},
                 {"best_val_mse", best_val},
                 {"final_penalty", tr.penalty()},
                 {"final_max_abs_v", run.series_of("max_abs_v").back()},
                 {"stability", label},
                 {"dinv_min", minmax(false)},
                 {"dinv_max", minmax(true)}};
  if (o.sharpness) {  // the GD stability numbers: lr × these against 2
    run.metrics.emplace_back("sharpness_init", relu_sharpness(o, data, init, true));
    run.metrics.emplace_back("sharpness_task_init", relu_sharpness(o, data, init, false));
    const double nan_if_diverged = std::numeric_limits<double>::quiet_NaN();
    run.metrics.emplace_back("sharpness_final", diverged ? nan_if_diverged : relu_sharpness(o, data, tr.net(), true));
    run.metrics.emplace_back("sharpness_task_final",
                             diverged ? nan_if_diverged : relu_sharpness(o, data, tr.net(), false));
  }
  run.arrays = {{"dinv", dinv}};
  // Every neuron's gauge coordinate at every logged step, [logged steps, H] row-major: with --save-data only
  // (a sweep stores every run's arrays element by element; 40 runs of 1000 samples made a 74 MB log).
  if (o.save_data) run.arrays.emplace_back("v_by_step", v_by_step);
  if (o.save_data) {  // Fig. 2: samples, the noiseless target and the trained net on the validation grid
    auto vec = [](const Vec<double>& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
    std::vector<double> f_val(data.x_val.size()), pred_val;
    for (Index i = 0; i < data.x_val.size(); ++i) f_val[i] = relu_target(data.x_val(i));
    if (!diverged) pred_val = vec(core::relu_forward(tr.net(), core::Mat<double>(data.x_val)).col(0));
    run.arrays.insert(run.arrays.end(), {{"x_train", vec(data.x_train)},
                                         {"y_train", vec(data.y_train)},
                                         {"x_val", vec(data.x_val)},
                                         {"y_val", vec(data.y_val)},
                                         {"f_val", f_val},
                                         {"pred_val", pred_val}});
  }
  return run;
}

}  // namespace gaugelab::toys

namespace gaugelab::toys {

ToyRun relu_schema(const ReluToyOptions& o) {
  ReluToyOptions one = o;
  one.steps = 1;
  one.gauges = 0;  // the invariance test's size is set below; running it here would only cost time
  ToyRun schema = run_relu_seed(one, 0);
  // Samples a run of o.steps logs when it does not diverge: every log_every-th step from 0, and the end.
  const std::size_t samples = static_cast<std::size_t>((o.steps + o.log_every - 1) / o.log_every) + 1;
  for (auto& [name, values] : schema.arrays) {
    if (name == "v_by_step") values.assign(samples * static_cast<std::size_t>(o.hidden), 0.0);
    if (name == "dinv") values.assign(static_cast<std::size_t>(o.gauges), 0.0);
    if (name == "pred_val") values.assign(static_cast<std::size_t>(o.n_val), 0.0);
  }
  return schema;
}

}  // namespace gaugelab::toys
