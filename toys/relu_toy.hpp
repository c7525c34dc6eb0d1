// Seed 004's regression toy: one-hidden-layer ReLU net, f(x) = W2·σ(W1·x + b1) + b2 with d = m = 1,
// trained by full-batch plain GD on MSE + λG(θ) (eq. 10), and the 200-gauge invariance test (eq. 11).
//
// The training step is a hand-written loop over samples and neurons into buffers allocated once
// (no allocation per step): this is the hot path of every sweep. It is checked against the core's
// reference (core::relu_forward for the loss, core::soft_gauge_penalty_gradient for ∇G) in
// tests/toys, so the formulas still have one home in src/core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/relu_gauge.hpp"
#include "core/random.hpp"
#include "toys/relu_options.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

struct ReluData {
  core::Vec<double> x_train, y_train;  // [n_train]
  core::Vec<double> x_val, y_val;      // [n_val]
};

/// y = sin(2.5x) + 0.2 cos(6x) + 0.1x  (eq. 24 without η).
double relu_target(double x);

/// Draws the data set of one seed (train x uniform, validation an even grid; noise per options).
ReluData make_relu_data(const ReluToyOptions& o, core::Rng& rng);

/// Initial parameters of one seed (options.init).
core::ReluNet<double> init_relu_net(const ReluToyOptions& o, core::Rng& rng);

/// Full-batch GD on one data set, d = m = 1. Buffers are sized once in the constructor.
class ReluTrainer {
 public:
  ReluTrainer(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& init);

  /// Loss pieces at the current parameters (train MSE, and G if lambda > 0 or asked).
  struct Loss {
    double mse = 0, penalty = 0, total = 0;
  };
  /// Computes the loss and its gradient at the current parameters, then takes one GD step.
  /// Returns the loss *before* the step.
  Loss step();
  /// Loss and gradient without stepping (gradient left in grad()).
  Loss evaluate();

  double val_mse() const;
  double penalty() const;     // G(θ)
  double max_abs_v() const;   // max_i |v_i|
  core::ReluNet<double> net() const;

  // Flat gradient in the order w1[H], b1[H], w2[H], b2 (for tests).
  std::vector<double> grad() const;

 private:
  const ReluToyOptions& o_;
  const ReluData& d_;
  int h_;
  core::Vec<double> w1_, b1_, w2_;  // [H]
  double b2_ = 0;
  core::Vec<double> gw1_, gb1_, gw2_;  // [H] gradients
  double gb2_ = 0;
};

/// Stability label of one run by the stated rule (toys/README.md): "diverged" if the training loss
/// went non-finite or above diverge_loss; "oscillating" if, over the last late_fraction of steps,
/// more than oscillation_rise of the steps raised the loss; else "stable".
std::string classify_run(const std::vector<double>& loss_per_step, const ReluToyOptions& o);

/// The label of a configuration over its seeds: "stable" if every seed is stable, "unstable" if at
/// least half are not, "marginal" otherwise.
std::string classify_seeds(const std::vector<std::string>& labels);

/// One seed: data, init, training with series, stability label, invariance samples.
ToyRun run_relu_seed(const ReluToyOptions& o, std::uint64_t seed);

}  // namespace gaugelab::toys
