#include "toys/sweep_points.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

namespace gaugelab::toys {

namespace {

constexpr std::size_t kMinTextWidth = 32;  // bytes of a text column (wider if a value needs it)

std::string cell_text(const io::Cell& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  char buf[40];
  if (const auto* d = std::get_if<double>(&v)) std::snprintf(buf, sizeof buf, "%.17g", *d);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(std::get<std::int64_t>(v)));
  return buf;
}

// How one summary key is stored: its column type from the values all points gave.
struct KeyKind {
  bool str = false, f64 = false, i64 = false;
  std::size_t present = 0, width = kMinTextWidth;
};

}  // namespace

bool holds_whole_sweep(const SweepPlan& plan, const SweepContents& c) {
  if (static_cast<std::int64_t>(c.records.size()) != plan.rows()) return false;
  return c.records.empty() || (c.records.begin()->first == 0 && c.records.rbegin()->first == plan.rows() - 1);
}

PointsTable sweep_points(const SweepPlan& plan, const SweepContents& c) {
  const auto grid = plan.axis_names();
  std::vector<std::vector<std::pair<std::string, io::Cell>>> summaries;
  std::vector<std::string> keys;
  std::map<std::string, KeyKind> kinds;
  for (std::int64_t p = 0; p < plan.points(); ++p) {
    std::vector<ToyRun> runs;
    for (std::int64_t s = 0; s < plan.seeds(); ++s) {
      const std::int64_t row = p * plan.seeds() + s;
      const auto it = c.records.find(row);
      if (it == c.records.end()) throw std::runtime_error("sweep points: " + plan.describe_row(row) + " is missing");
      runs.push_back(to_toy_run(c, it->second, grid));
    }
    summaries.push_back(plan.toy(p).summarize(runs));
    for (const auto& [k, v] : summaries.back()) {
      if (!kinds.count(k)) keys.push_back(k);
      auto& kk = kinds[k];
      ++kk.present;
      if (const auto* s = std::get_if<std::string>(&v)) kk.str = true, kk.width = std::max(kk.width, s->size());
      else if (std::holds_alternative<double>(v)) kk.f64 = true;
      else kk.i64 = true;
    }
  }
  PointsTable t;
  t.cols.push_back({"point", io::DType::i64});
  for (const auto& g : grid) t.cols.push_back({g, io::DType::f64});
  t.cols.push_back({"runs", io::DType::i64});
  std::vector<io::DType> types;
  for (const auto& k : keys) {
    auto& kk = kinds[k];
    if (kk.str) {
      for (const auto& s : summaries)
        for (const auto& [key, v] : s)
          if (key == k) kk.width = std::max(kk.width, cell_text(v).size());
    }
    const bool missing = kk.present < summaries.size();
    const io::DType type = kk.str ? io::DType::str : (kk.f64 || missing) ? io::DType::f64 : io::DType::i64;
    const bool clash = k == "point" || k == "runs" || std::find(grid.begin(), grid.end(), k) != grid.end();
    t.cols.push_back({clash ? "metric_" + k : k, type, kk.width});
    types.push_back(type);
  }
  for (std::int64_t p = 0; p < plan.points(); ++p) {
    io::Row r{p};
    for (double v : plan.point_values(p)) r.emplace_back(v);
    r.emplace_back(plan.seeds());
    const auto& s = summaries[static_cast<std::size_t>(p)];
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const auto it = std::find_if(s.begin(), s.end(), [&](const auto& kv) { return kv.first == keys[k]; });
      if (types[k] == io::DType::str) r.emplace_back(it == s.end() ? std::string() : cell_text(it->second));
      else if (it == s.end()) r.emplace_back(std::numeric_limits<double>::quiet_NaN());
      else r.push_back(it->second);  // an int64 cell fills an f64 column
    }
    t.rows.push_back(std::move(r));
  }
  return t;
}

std::vector<std::pair<std::string, io::Cell>> sweep_summary(const SweepPlan& plan, const SweepContents& c) {
  std::int64_t in_shard = 0;
  for (const auto& [row, _] : c.records) in_shard += plan.shard().owns(row);
  const auto expected = static_cast<std::int64_t>(plan.shard_rows().size());
  return {{"toy", plan.toy_name()},
          {"grid", plan.grid_text()},
          {"points", plan.points()},
          {"seeds_per_point", plan.seeds()},
          {"rows_total", plan.rows()},
          {"shard", plan.shard().str()},
          {"rows_in_shard", expected},
          {"rows_done", in_shard},
          {"complete", std::int64_t{in_shard == expected}}};
}

std::vector<std::pair<std::string, io::Cell>> finish_sweep_log(
    const std::string& path, const SweepPlan& plan, const SweepContents& c,
    const std::vector<std::pair<std::string, io::Cell>>& extra) {
  auto summary = sweep_summary(plan, c);
  summary.insert(summary.end(), extra.begin(), extra.end());
  std::optional<PointsTable> points;
  if (!c.has_points && holds_whole_sweep(plan, c) && !c.records.empty()) points = sweep_points(plan, c);
  auto log = io::RunLog::open_append(path);
  if (points) log.declare_table("points", points->cols);
  log.start();
  if (points)
    for (const auto& r : points->rows) log.append_row("points", r);
  for (const auto& [k, v] : summary) log.set_summary(k, v);
  log.close();
  return summary;
}

}  // namespace gaugelab::toys
