// Seed 004's regression toy: one-hidden-layer ReLU net, f(x) = W2·σ(W1·x + b1) + b2 with d = m = 1,
// trained by full-batch plain GD on MSE + λG(θ) (eq. 10), and the 200-gauge invariance test (eq. 11).
//
// The training step (toys/relu_kernel.hpp) is a fixed-size Eigen kernel for H = 20, no allocation
// per step, whose task pass is O(N + H) by default (toys/relu_sorted_pass.hpp): this is the hot path
// of every sweep. It is checked against the core's reference
// (core::relu_forward for the loss, core::soft_gauge_penalty_gradient for ∇G) in tests/toys, so the
// formulas still have one home in src/core.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/relu_gauge.hpp"
#include "core/random.hpp"
#include "toys/relu_kernel.hpp"
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

/// Full-batch GD on one data set, d = m = 1: a ReluKernel (toys/relu_kernel.hpp) of the net's width,
/// fixed-size for H = 20, dynamic (sized once) otherwise. `data` must outlive the trainer.
class ReluTrainer {
 public:
  ReluTrainer(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& init);

  using Loss = ReluLoss;
  /// Computes the loss and its gradient at the current parameters, then takes one GD step.
  /// Returns the loss *before* the step.
  Loss step() {
    const Loss l = k_->evaluate();
    k_->descend();
    return l;
  }
  /// Loss and gradient without stepping (gradient left in grad()).
  Loss evaluate() { return k_->evaluate(); }
  /// One GD step with the gradient of the last evaluate().
  void descend() { k_->descend(); }

  double val_mse() const { return k_->val_mse(); }
  double penalty() const { return k_->penalty(); }      // G(θ)
  double max_abs_v() const { return k_->max_abs_v(); }  // max_i |v_i|
  core::ReluNet<double> net() const;
  /// Whether this width runs the fixed-size kernel.
  bool fixed_size() const { return fixed_; }

  // Flat gradient in the order w1[H], b1[H], w2[H], b2 (for tests).
  std::vector<double> grad() const { return k_->grad(); }
  /// v, κ, v̇ = −∇v·g and the balance c per neuron [H] each (ReluKernelBase::gauge_dynamics).
  void gauge_dynamics(double* v, double* kappa, double* dv_dt, double* balance) const {
    k_->gauge_dynamics(v, kappa, dv_dt, balance);
  }
  /// The gradient of the last evaluate() in the net's shapes.
  core::ReluNet<double> grad_net() const;

 private:
  std::unique_ptr<ReluKernelBase> k_;
  int h_;
  bool fixed_;
};

/// Stability label of one run by the stated rule (toys/README.md): "diverged" if the training loss
/// went non-finite or above diverge_loss; "oscillating" if, over the last late_fraction of steps,
/// more than oscillation_rise of the steps raised the loss by more than rise_tol (relative); else "stable".
std::string classify_run(const std::vector<double>& loss_per_step, const ReluToyOptions& o);

/// The label of a configuration over its seeds: "stable" if every seed is stable, "unstable" if at
/// least half are not, "marginal" otherwise.
std::string classify_seeds(const std::vector<std::string>& labels);

/// The largest eigenvalue of the Hessian [3H+1, 3H+1] of the training loss at `net` — MSE + λG with
/// `with_penalty`, the MSE alone without — by central differences of the kernel's analytic gradient
/// (step 1e-5·max(|θ_j|, 1e-2) per coordinate), symmetrised. Explicit GD near a minimum is stable
/// while lr times it is below 2. Costs 2(3H+1) gradient evaluations.
/// `direction` (optional, [3H+1] in the kernel's flat order) receives the unit eigenvector.
double relu_sharpness(const ReluToyOptions& o, const ReluData& data, const core::ReluNet<double>& net,
                      bool with_penalty, std::vector<double>* direction = nullptr);

/// One seed: data, init, training with series, stability label, invariance samples. With `sink`, each logged
/// sample (step, one value per series) is also handed to it as it is made (`gaugelab toy` streams the log).
ToyRun run_relu_seed(const ReluToyOptions& o, std::uint64_t seed,
                     const std::function<void(std::int64_t, const std::vector<double>&)>* sink = nullptr);

/// The log layout of a run of `o` (series, metric and array names, arrays at the sizes a run that does not
/// diverge writes), from a one-step run of the same settings.
ToyRun relu_schema(const ReluToyOptions& o);

}  // namespace gaugelab::toys
