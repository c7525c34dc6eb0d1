// The toy table: name -> constructor. Add a toy here and it is reachable from `toy` and `sweep`.
#include <cmath>
#include <functional>
#include <utility>

#include "toys/toy.hpp"
#include "toys/toy_specs.hpp"

namespace gaugelab::toys {

namespace {

const std::vector<std::pair<std::string, std::function<std::unique_ptr<Toy>()>>>& table() {
  static const std::vector<std::pair<std::string, std::function<std::unique_ptr<Toy>()>>> t = {
      {"relu", make_relu_toy},
      {"factor-scalar", make_factor_scalar_toy},
      {"factor-matrix", make_factor_matrix_toy},
      {"muon", make_muon_toy},
      {"wd-gram", make_wd_gram_toy},
      {"hyperball", make_hyperball_toy},
      {"noise-wd", make_noise_wd_toy},
  };
  return t;
}

}  // namespace

std::vector<std::string> toy_names() {
  std::vector<std::string> n;
  for (const auto& [k, _] : table()) n.push_back(k);
  return n;
}

std::unique_ptr<Toy> make_toy(const std::string& name) {
  for (const auto& [k, make] : table())
    if (k == name) return make();
  std::string known;
  for (const auto& k : toy_names()) known += (known.empty() ? "" : ", ") + k;
  throw io::UsageError("unknown toy '" + name + "' (known: " + known + ")");
}

MeanStd mean_std(const std::vector<ToyRun>& runs, const std::string& metric) {
  MeanStd m;
  double sum = 0, sq = 0;
  for (const auto& r : runs) {
    const double v = r.metric(metric);
    if (!std::isfinite(v)) continue;
    sum += v;
    ++m.count;
  }
  if (m.count == 0) return {NAN, NAN, 0};
  m.mean = sum / m.count;
  for (const auto& r : runs) {
    const double v = r.metric(metric);
    if (std::isfinite(v)) sq += (v - m.mean) * (v - m.mean);
  }
  m.std = std::sqrt(sq / m.count);  // population std, as the seeds' tables report
  return m;
}

}  // namespace gaugelab::toys
