#include "toys/relu_toy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/coordinates.hpp"
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
  if (o.init == "torch") {  // nn.Linear: U(±1/√fan_in) for weight and bias
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

ReluTrainer::ReluTrainer(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& init)
    : o_(o), d_(data), h_(static_cast<int>(init.hidden())) {
  if (init.input_dim() != 1 || init.output_dim() != 1) throw std::invalid_argument("ReluTrainer: d = m = 1 only");
  w1_ = init.W1.col(0);
  b1_ = init.b1;
  w2_ = init.W2.row(0).transpose();
  b2_ = init.b2(0);
  gw1_.setZero(h_);
  gb1_.setZero(h_);
  gw2_.setZero(h_);
}

ReluTrainer::Loss ReluTrainer::evaluate() {
  const Index n = d_.x_train.size();
  gw1_.setZero();
  gb1_.setZero();
  gw2_.setZero();
  gb2_ = 0;
  double sse = 0;
  for (Index s = 0; s < n; ++s) {
    const double x = d_.x_train(s);
    double pred = b2_;
    for (int i = 0; i < h_; ++i) {
      const double z = w1_(i) * x + b1_(i);
      if (z > 0) pred += w2_(i) * z;
    }
    const double r = pred - d_.y_train(s);
    sse += r * r;
    // d(mean r²)/dθ = (2/N) Σ r ∂pred/∂θ; the 2/N is applied once below.
    gb2_ += r;
    for (int i = 0; i < h_; ++i) {
      const double z = w1_(i) * x + b1_(i);
      if (z > 0) {
        gw2_(i) += r * z;
        const double back = r * w2_(i);
        gw1_(i) += back * x;
        gb1_(i) += back;
      }
    }
  }
  const double scale = 2.0 / static_cast<double>(n);
  gw1_ *= scale;
  gb1_ *= scale;
  gw2_ *= scale;
  gb2_ *= scale;
  Loss l;
  l.mse = sse / static_cast<double>(n);
  // Soft gauge fixing, seed 004 eqs. (9), (A11)-(A12) specialised to d = m = 1 (n1 = |w1_i|,
  // n2 = |w2_i|); equal to core::soft_gauge_penalty_gradient (tests/toys checks it).
  if (o_.lambda > 0) {
    const double eps = o_.eps, two_over_h = 2.0 / h_;
    double g = 0;
    for (int i = 0; i < h_; ++i) {
      const double n1 = std::fabs(w1_(i)), n2 = std::fabs(w2_(i));
      const double v = std::log(n1 + eps) - std::log(n2 + eps);
      g += v * v;
      if (n1 > 0) gw1_(i) += o_.lambda * two_over_h * v * w1_(i) / (n1 * (n1 + eps));
      if (n2 > 0) gw2_(i) -= o_.lambda * two_over_h * v * w2_(i) / (n2 * (n2 + eps));
    }
    l.penalty = g / h_;
  }
  l.total = l.mse + o_.lambda * l.penalty;
  return l;
}

ReluTrainer::Loss ReluTrainer::step() {
  const Loss l = evaluate();
  w1_.noalias() -= o_.lr * gw1_;
  b1_.noalias() -= o_.lr * gb1_;
  w2_.noalias() -= o_.lr * gw2_;
  b2_ -= o_.lr * gb2_;
  return l;
}

double ReluTrainer::val_mse() const {
  double sse = 0;
  for (Index s = 0; s < d_.x_val.size(); ++s) {
    const double x = d_.x_val(s);
    double pred = b2_;
    for (int i = 0; i < h_; ++i) pred += w2_(i) * std::max(0.0, w1_(i) * x + b1_(i));
    sse += (pred - d_.y_val(s)) * (pred - d_.y_val(s));
  }
  return sse / static_cast<double>(d_.x_val.size());
}

core::ReluNet<double> ReluTrainer::net() const {
  core::ReluNet<double> n{core::Mat<double>(h_, 1), b1_, core::Mat<double>(1, h_), Vec<double>(1)};
  n.W1.col(0) = w1_;
  n.W2.row(0) = w2_.transpose();
  n.b2(0) = b2_;
  return n;
}

double ReluTrainer::penalty() const { return core::soft_gauge_penalty(net(), o_.eps); }

double ReluTrainer::max_abs_v() const { return core::uv_coordinates(net(), o_.eps).v.cwiseAbs().maxCoeff(); }

std::vector<double> ReluTrainer::grad() const {
  std::vector<double> g;
  for (int i = 0; i < h_; ++i) g.push_back(gw1_(i));
  for (int i = 0; i < h_; ++i) g.push_back(gb1_(i));
  for (int i = 0; i < h_; ++i) g.push_back(gw2_(i));
  g.push_back(gb2_);
  return g;
}

std::string classify_run(const std::vector<double>& loss, const ReluToyOptions& o) {
  for (double l : loss)
    if (!std::isfinite(l) || l > o.diverge_loss) return "diverged";
  const size_t n = loss.size();
  const size_t late = std::max<size_t>(2, static_cast<size_t>(std::ceil(o.late_fraction * n)));
  const size_t start = n > late ? n - late : 0;
  size_t rises = 0, pairs = 0;
  for (size_t t = start + 1; t < n; ++t, ++pairs) rises += loss[t] > loss[t - 1];
  return pairs > 0 && static_cast<double>(rises) / pairs > o.oscillation_rise ? "oscillating" : "stable";
}

std::string classify_seeds(const std::vector<std::string>& labels) {
  size_t bad = 0;
  for (const auto& l : labels) bad += l != "stable";
  if (bad == 0) return "stable";
  return 2 * bad >= labels.size() ? "unstable" : "marginal";
}

ToyRun run_relu_seed(const ReluToyOptions& o, std::uint64_t seed) {
  // Independent streams for data, init and gauges, so changing --gauges never changes training.
  core::Rng data_rng(seed * 3 + 0x5eed0001ULL), init_rng(seed * 3 + 0x5eed0002ULL), gauge_rng(seed * 3 + 0x5eed0003ULL);
  const ReluData data = make_relu_data(o, data_rng);
  ReluTrainer tr(o, data, init_relu_net(o, init_rng));

  ToyRun run;
  run.series_names = {"train_mse", "val_mse", "penalty", "max_abs_v", "loss"};
  run.series.assign(run.series_names.size(), {});
  std::vector<double> loss_per_step;
  loss_per_step.reserve(static_cast<size_t>(o.steps) + 1);
  auto sample = [&](std::int64_t step, const ReluTrainer::Loss& l) {
    run.steps.push_back(step);
    const double vals[] = {l.mse, tr.val_mse(), tr.penalty(), tr.max_abs_v(), l.total};
    for (size_t k = 0; k < run.series.size(); ++k) run.series[k].push_back(vals[k]);
  };
  bool diverged = false;
  for (std::int64_t t = 0; t < o.steps; ++t) {
    const auto l = tr.step();  // loss at step t (before its update)
    loss_per_step.push_back(l.total);
    if (t % o.log_every == 0) sample(t, l);
    if (!std::isfinite(l.total) || l.total > o.diverge_loss) {
      diverged = true;
      break;
    }
  }
  const auto final_loss = tr.evaluate();
  loss_per_step.push_back(final_loss.total);
  sample(diverged ? static_cast<std::int64_t>(loss_per_step.size()) - 1 : o.steps, final_loss);

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
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto minmax = [&](bool mx) {
    if (dinv.empty()) return nan;
    return mx ? *std::max_element(dinv.begin(), dinv.end()) : *std::min_element(dinv.begin(), dinv.end());
  };
  double best_val = std::numeric_limits<double>::infinity();
  for (double v : run.series_of("val_mse")) best_val = std::min(best_val, v);
  run.metrics = {{"seed", static_cast<std::int64_t>(seed)},
                 {"final_train_mse", final_loss.mse},
                 {"final_val_mse", run.series_of("val_mse").back()},
                 {"best_val_mse", best_val},
                 {"final_penalty", final_loss.penalty},
                 {"final_max_abs_v", run.series_of("max_abs_v").back()},
                 {"stability", label},
                 {"dinv_min", minmax(false)},
                 {"dinv_max", minmax(true)}};
  run.arrays = {{"dinv", dinv}};
  return run;
}

}  // namespace gaugelab::toys
