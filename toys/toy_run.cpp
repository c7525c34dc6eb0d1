#include "toys/toy_run.hpp"

#include <stdexcept>

namespace gaugelab::toys {

double ToyRun::metric(const std::string& name) const {
  for (const auto& [k, v] : metrics) {
    if (k != name) continue;
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    throw std::runtime_error("toy metric '" + name + "' is not numeric");
  }
  throw std::runtime_error("toy run has no metric '" + name + "'");
}

const std::vector<double>& ToyRun::series_of(const std::string& name) const {
  for (size_t i = 0; i < series_names.size(); ++i)
    if (series_names[i] == name) return series[i];
  throw std::runtime_error("toy run has no series '" + name + "'");
}

}  // namespace gaugelab::toys
