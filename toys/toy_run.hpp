// What one toy run produces, independent of which toy: the common currency of `gaugelab toy`
// and `gaugelab sweep` (they write it to the HDF5 log; see toys/toy_log.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/run_log_types.hpp"

namespace gaugelab::toys {

struct ToyRun {
  // Per-step series, all of length steps.size(): names[i] -> values[i].
  std::vector<std::int64_t> steps;
  std::vector<std::string> series_names;
  std::vector<std::vector<double>> series;
  // Headline figures of the run (one row of /tables/runs; means go to /summary).
  std::vector<std::pair<std::string, io::Cell>> metrics;
  // Anything else worth keeping whole (e.g. the 200 invariance samples): /arrays/<name>.
  std::vector<std::pair<std::string, std::vector<double>>> arrays;

  double metric(const std::string& name) const;  // throws if absent or not numeric
  const std::vector<double>& series_of(const std::string& name) const;
};

}  // namespace gaugelab::toys
