#include "toys/relu_options.hpp"

namespace gaugelab::toys {

using io::Range;

namespace {

// The largest width and sample counts: each is a few arrays of doubles per seed (1e7: 80 MB each) and a
// pass over them every step; --hidden 1e9 once spent minutes allocating before its first progress line.
constexpr double kMaxSize = 1e7;

}  // namespace

void declare(io::Options& opts, ReluToyOptions& o) {
  opts.add("hidden", &o.hidden, "hidden width H", Range::closed(1, kMaxSize))
      .add("n-train", &o.n_train, "training samples x ~ U[train-lo, train-hi]", Range::closed(1, kMaxSize))
      .add("n-val", &o.n_val, "validation grid points on [val-lo, val-hi]", Range::closed(2, kMaxSize))
      .add("train-lo", &o.train_lo, "training interval start")
      .add("train-hi", &o.train_hi, "training interval end")
      .add("val-lo", &o.val_lo, "validation interval start")
      .add("val-hi", &o.val_hi, "validation interval end")
      .add("noise-std", &o.noise_std, "standard deviation of the target noise", Range::non_negative())
      .add("val-noise", &o.val_noise, "add the same noise to validation targets")
      .add("data-seed", &o.data_seed, "seed of the data set shared by all runs; -1: each run draws its own", Range::at_least(-1))
      .add("lr", &o.lr, "learning rate of full-batch GD", Range::positive())
      .add("lambda", &o.lambda, "soft gauge-fixing strength (loss + lambda*G)", Range::non_negative())
      .add("eps", &o.eps, "epsilon in log(n + eps)", Range::non_negative())
      .add("steps", &o.steps, "GD steps", Range::at_least(1))
      .add("init", &o.init, "initialisation scheme", {"small", "torch", "he"})
      .add("init-scale", &o.init_scale, "standard deviation of every parameter under --init small", Range::positive())
      .add("kernel", &o.kernel,
           "task pass of the GD step: sorted (O(N + H) a step, exact for the scalar input) or dense (O(N*H), every "
           "neuron on every sample; the reference)",
           {"sorted", "dense"})
      .add("log-every", &o.log_every, "series sample period in steps", Range::at_least(1))
      .add("save-data", &o.save_data, "log the data set, the trained net's validation curve and every neuron's v at every logged step as arrays")
      .add("sharpness", &o.sharpness,
           "log the top Hessian eigenvalue of the training loss (and of the MSE alone) at the start and the end: "
           "GD is stable near a minimum while lr times it < 2")
      .add("diverge-loss", &o.diverge_loss, "training loss above which a run has diverged", Range::positive())
      .add("late-fraction", &o.late_fraction, "final fraction of steps judged for oscillation", Range{0.0, 1.0, true, false})
      .add("oscillation-rise", &o.oscillation_rise, "late-step rise fraction above which a run oscillates", Range::closed(0, 1))
      .add("rise-tol", &o.rise_tol, "relative loss increase below which a step does not count as a rise (round-off)",
           Range::closed(0, 1))
      .add("gauges", &o.gauges, "random gauges in the invariance test", Range::at_least(0))
      .add("gauge-log-spread", &o.gauge_log_spread, "gauge scales exp(U(-a, a)); a <= 700 keeps exp(+-a) a finite double",
           Range::closed(0, 700))
      .add("seeds", &o.seeds, "independent runs (seed, seed+1, ...)", Range::at_least(1));
  opts.check([&o] {
    if (!(o.train_lo < o.train_hi)) throw io::UsageError("--train-lo must be < --train-hi");
    if (!(o.val_lo < o.val_hi)) throw io::UsageError("--val-lo must be < --val-hi");
  });
}

}  // namespace gaugelab::toys
