// The `relu` toy behind the Toy interface (seed 004).
#include <algorithm>
#include <cmath>

#include "toys/relu_toy.hpp"
#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

namespace {

class ReluToy final : public Toy {
 public:
  std::string name() const override { return "relu"; }
  std::string summary() const override {
    return "Seed 004: one-hidden-layer ReLU regression, plain GD on MSE + lambda*G (soft gauge fixing), "
           "stability label by the stated rule, and the random-gauge invariance test.";
  }
  void declare(io::Options& opts) override { toys::declare(opts, o_); }
  int seeds() const override { return o_.seeds; }
  ToyRun run(std::uint64_t seed) const override { return run_relu_seed(o_, seed); }
  ToyRun schema() const override { return relu_schema(o_); }
  ToyRun run_streamed(std::uint64_t seed, const SampleSink& sink) const override {
    return run_relu_seed(o_, seed, &sink);
  }
  std::vector<std::pair<std::string, io::Cell>> summarize(const std::vector<ToyRun>& runs) const override {
    std::vector<std::pair<std::string, io::Cell>> s;
    // Means and stds over the seeds that did not diverge (as the figures draw them): one diverged seed
    // (MSE ~1e11) would otherwise be the whole mean. seeds_in_means says how many entered; NaN if none.
    std::vector<ToyRun> kept;
    for (const auto& r : runs) {
      bool diverged = false;
      for (const auto& [k, v] : r.metrics)
        if (k == "stability") diverged = std::get<std::string>(v) == "diverged";
      if (!diverged) kept.push_back(r);
    }
    for (const char* m : {"final_train_mse", "final_val_mse", "best_val_mse", "final_penalty", "final_max_abs_v",
                          "const_train_mse", "const_val_mse"}) {
      const auto ms = kept.empty() ? MeanStd{std::nan(""), std::nan("")} : mean_std(kept, m);
      s.emplace_back(std::string(m) + "_mean", ms.mean);
      s.emplace_back(std::string(m) + "_std", ms.std);
    }
    s.emplace_back("seeds_in_means", static_cast<std::int64_t>(kept.size()));
    std::vector<std::string> labels;
    int diverged = 0;
    for (const auto& r : runs) {
      for (const auto& [k, v] : r.metrics)
        if (k == "stability") labels.push_back(std::get<std::string>(v));
      diverged += labels.back() == "diverged";
    }
    s.emplace_back("stability", classify_seeds(labels));
    s.emplace_back("seeds_not_stable", static_cast<std::int64_t>(std::count_if(
                                           labels.begin(), labels.end(), [](auto& l) { return l != "stable"; })));
    s.emplace_back("seeds_diverged", static_cast<std::int64_t>(diverged));
    // Fig. 5 statistics over the first seed's gauges.
    for (const auto& [name, v] : runs.front().arrays) {
      if (name != "dinv" || v.empty()) continue;
      std::vector<double> d = v;
      std::sort(d.begin(), d.end());
      s.emplace_back("dinv_min", d.front());
      s.emplace_back("dinv_median", d.size() % 2 ? d[d.size() / 2] : 0.5 * (d[d.size() / 2 - 1] + d[d.size() / 2]));
      s.emplace_back("dinv_max", d.back());
    }
    return s;
  }

 private:
  ReluToyOptions o_;
};

}  // namespace

std::unique_ptr<Toy> make_relu_toy() { return std::make_unique<ReluToy>(); }

}  // namespace gaugelab::toys
