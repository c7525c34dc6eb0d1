// The interface every toy implements, so `gaugelab toy` and `gaugelab sweep` treat them alike.
// A toy owns its options struct; run(seed) is const and thread-safe (the sweep runs many at once).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/options.hpp"
#include "io/run_log.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

class Toy {
 public:
  virtual ~Toy() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;  // first line of --help
  /// Registers the toy's options on `opts`, bound to this object's own settings.
  virtual void declare(io::Options& opts) = 0;
  /// How many seeds one configuration runs (its --seeds, 1 for deterministic toys).
  virtual int seeds() const = 0;
  /// One seed of the configuration.
  virtual ToyRun run(std::uint64_t seed) const = 0;
  /// Receives a run's logged samples (step, one value per series) as they are made.
  using SampleSink = std::function<void(std::int64_t step, const std::vector<double>& values)>;
  /// The layout of a run's log (series and metric names, array names and sizes) before any run, when the toy
  /// can say it; then `gaugelab toy` streams the first seed's /series while it runs. Default: it cannot (empty
  /// series_names), and the log is written when every seed has finished.
  virtual ToyRun schema() const { return {}; }
  /// run(seed), handing each logged sample to `sink` as it is made (default: after the run, all at once).
  virtual ToyRun run_streamed(std::uint64_t seed, const SampleSink& sink) const {
    ToyRun r = run(seed);
    std::vector<double> v(r.series.size());
    for (std::size_t t = 0; t < r.steps.size(); ++t) {
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = r.series[k][t];
      sink(r.steps[t], v);
    }
    return r;
  }
  /// Headline figures over the seeds of one configuration, for /summary and the printed summary.
  virtual std::vector<std::pair<std::string, io::Cell>> summarize(const std::vector<ToyRun>& runs) const = 0;
};

/// A new toy by name; throws io::UsageError naming the unknown toy and listing the known ones.
std::unique_ptr<Toy> make_toy(const std::string& name);
std::vector<std::string> toy_names();

/// Mean and population standard deviation of a metric over runs (NaN-free runs only).
struct MeanStd {
  double mean = 0, std = 0;
  int count = 0;
};
MeanStd mean_std(const std::vector<ToyRun>& runs, const std::string& metric);

}  // namespace gaugelab::toys
