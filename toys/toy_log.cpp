#include "toys/toy_log.hpp"

#include <limits>
#include <stdexcept>

namespace gaugelab::toys {

namespace {

io::Column column_for(const std::string& name, const io::Cell& c) {
  if (std::holds_alternative<std::string>(c)) return {name, io::DType::str, 32};
  if (std::holds_alternative<std::int64_t>(c)) return {name, io::DType::i64};
  return {name, io::DType::f64};
}

}  // namespace

void declare_toy_log(io::RunLog& log, const std::vector<std::string>& grid_columns, const ToyRun& example,
                     bool first_series) {
  std::vector<io::Column> runs{{"row", io::DType::i64}};
  for (const auto& g : grid_columns) runs.push_back({g, io::DType::f64});
  for (const auto& [k, v] : example.metrics) runs.push_back(column_for(k, v));
  log.declare_table("runs", runs);
  std::vector<io::Column> series{{"run", io::DType::i64}, {"step", io::DType::i64}};
  for (const auto& n : example.series_names) series.push_back({n, io::DType::f64});
  log.declare_table("run_series", series);
  if (first_series) {
    log.declare_series(example.series_names);
    for (const auto& [name, values] : example.arrays)
      if (!values.empty()) log.declare_array(name, {values.size()});
  }
}

void append_toy_run(io::RunLog& log, std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run) {
  for (size_t t = 0; t < run.steps.size(); ++t) {
    io::Row s{row, run.steps[t]};
    for (const auto& series : run.series) s.emplace_back(series[t]);
    log.append_row("run_series", s);
  }
  io::Row r{row};
  for (double g : grid_values) r.emplace_back(g);
  for (const auto& [k, v] : run.metrics) r.push_back(v);
  log.append_row("runs", r);
}

void write_first_series(io::RunLog& log, const ToyRun& run) {
  for (size_t t = 0; t < run.steps.size(); ++t) {
    std::vector<double> v;
    for (const auto& s : run.series) v.push_back(s[t]);
    log.append_series(run.steps[t], v);
  }
  for (const auto& [name, values] : run.arrays)
    if (!values.empty()) log.write_array(name, values.data(), values.size());
}

void write_first_arrays(io::RunLog& log, const ToyRun& run, const ToyRun& schema) {
  for (const auto& [name, declared] : schema.arrays) {
    if (declared.empty()) continue;
    for (const auto& [n, values] : run.arrays) {
      if (n != name || values.empty()) continue;
      if (values.size() > declared.size())
        throw std::logic_error("toy log: array " + name + " has " + std::to_string(values.size()) +
                               " values, more than the " + std::to_string(declared.size()) + " declared");
      std::vector<double> padded = values;
      padded.resize(declared.size(), std::numeric_limits<double>::quiet_NaN());
      log.write_array(name, padded.data(), padded.size());
    }
  }
}

}  // namespace gaugelab::toys
