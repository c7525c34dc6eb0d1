#include "toys/sweep_log.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "toys/toy_log.hpp"
#include "io/atomic_file.hpp"

namespace gaugelab::toys {

namespace {

constexpr const char* kMetricPrefix = "metric_";  // a metric named like a grid column is stored under this prefix

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const std::vector<io::Column> kArraysCols = {
    {"run", io::DType::i64}, {"array", io::DType::str, 64}, {"index", io::DType::i64}, {"value", io::DType::f64}};

io::Cell cell_at(const io::ColumnData& col, std::size_t i) {
  if (const auto* d = std::get_if<std::vector<double>>(&col)) return (*d)[i];
  if (const auto* n = std::get_if<std::vector<std::int64_t>>(&col)) return (*n)[i];
  return std::get<std::vector<std::string>>(col)[i];
}

// Rows of a table, each as cells in column order.
std::vector<io::Row> rows_of(const io::TableData& t) {
  std::vector<io::Row> out(t.rows);
  for (std::size_t i = 0; i < t.rows; ++i)
    for (const auto& col : t.data) out[i].push_back(cell_at(col, i));
  return out;
}

// A copy of `run` with its metrics renamed for storage, only when a name clashes.
std::optional<ToyRun> renamed(const ToyRun& run, const std::vector<std::string>& grid) {
  bool clash = false;
  for (const auto& [k, _] : run.metrics) clash = clash || contains(grid, k);
  if (!clash) return std::nullopt;
  ToyRun r = run;
  r.metrics = stored_metrics(run, grid);
  return r;
}

}  // namespace

std::vector<std::pair<std::string, io::Cell>> stored_metrics(const ToyRun& run, const std::vector<std::string>& grid) {
  auto m = run.metrics;
  for (auto& [k, _] : m)
    if (contains(grid, k)) k = kMetricPrefix + k;
  return m;
}

SweepContents read_sweep(const io::RunLogReader& reader) {
  SweepContents c;
  if (!reader.has_table("runs")) return c;
  const io::TableData runs = reader.table("runs");
  c.runs_cols = runs.columns;
  const auto& row_ids = runs.i64("row");
  auto runs_rows = rows_of(runs);
  for (std::size_t i = 0; i < runs.rows; ++i) {
    const auto [it, fresh] = c.records.emplace(row_ids[i], SweepRecord{});
    if (!fresh) throw std::runtime_error("sweep log '" + reader.path() + "': row " + std::to_string(row_ids[i]) +
                                         " appears twice in /tables/runs");
    it->second.runs = std::move(runs_rows[i]);
  }
  // Long-format tables: keep the rows of complete runs, count the others.
  auto distribute = [&](const char* name, std::vector<io::Column>& cols, std::vector<io::Row> SweepRecord::*member) {
    if (!reader.has_table(name)) return;
    const io::TableData t = reader.table(name);
    cols = t.columns;
    const auto& run_ids = t.i64("run");
    auto rows = rows_of(t);
    for (std::size_t i = 0; i < t.rows; ++i) {
      const auto it = c.records.find(run_ids[i]);
      if (it == c.records.end()) ++c.orphan_rows;
      else (it->second.*member).push_back(std::move(rows[i]));
    }
  };
  distribute("run_series", c.series_cols, &SweepRecord::series);
  distribute("run_arrays", c.arrays_cols, &SweepRecord::arrays);
  if (reader.has_table("points")) {
    c.has_points = true;
    c.points_rows = reader.table("points").rows;
  }
  return c;
}

void declare_sweep_tables(io::RunLog& log, const std::vector<std::string>& grid, const ToyRun& example) {
  const auto r = renamed(example, grid);
  declare_toy_log(log, grid, r ? *r : example, /*first_series=*/false);
  log.declare_table("run_arrays", kArraysCols);
}

void declare_sweep_tables(io::RunLog& log, const SweepContents& like) {
  log.declare_table("runs", like.runs_cols);
  log.declare_table("run_series", like.series_cols);
  log.declare_table("run_arrays", like.arrays_cols.empty() ? kArraysCols : like.arrays_cols);
}

void append_sweep_run(io::RunLog& log, std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run,
                      const std::vector<std::string>& grid) {
  for (const auto& [name, values] : run.arrays)
    for (std::size_t i = 0; i < values.size(); ++i)
      log.append_row("run_arrays", {row, name, static_cast<std::int64_t>(i), values[i]});
  const auto r = renamed(run, grid);
  append_toy_run(log, row, grid_values, r ? *r : run);  // series, then the /tables/runs row
}

void append_sweep_record(io::RunLog& log, const SweepRecord& rec) {
  for (const auto& a : rec.arrays) log.append_row("run_arrays", a);
  for (const auto& s : rec.series) log.append_row("run_series", s);
  log.append_row("runs", rec.runs);
}

ToyRun to_toy_run(const SweepContents& c, const SweepRecord& rec, const std::vector<std::string>& grid) {
  ToyRun run;
  // /tables/runs: row, the grid columns, then the metrics.
  for (std::size_t i = 1 + grid.size(); i < c.runs_cols.size(); ++i) {
    std::string name = c.runs_cols[i].name;
    const std::string prefix = kMetricPrefix;
    if (name.rfind(prefix, 0) == 0 && contains(grid, name.substr(prefix.size()))) name = name.substr(prefix.size());
    run.metrics.emplace_back(name, rec.runs[i]);
  }
  // /tables/run_series: run, step, then the series.
  for (std::size_t k = 2; k < c.series_cols.size(); ++k) run.series_names.push_back(c.series_cols[k].name);
  run.series.assign(run.series_names.size(), {});
  for (const auto& s : rec.series) {
    run.steps.push_back(std::get<std::int64_t>(s[1]));
    for (std::size_t k = 2; k < s.size(); ++k) run.series[k - 2].push_back(std::get<double>(s[k]));
  }
  // /tables/run_arrays: run, array, index, value (indices ascending within an array).
  for (const auto& a : rec.arrays) {
    const auto& name = std::get<std::string>(a[1]);
    auto it = std::find_if(run.arrays.begin(), run.arrays.end(), [&](const auto& p) { return p.first == name; });
    if (it == run.arrays.end()) it = run.arrays.insert(run.arrays.end(), {name, {}});
    const auto idx = static_cast<std::size_t>(std::get<std::int64_t>(a[2]));
    if (it->second.size() <= idx) it->second.resize(idx + 1);
    it->second[idx] = std::get<double>(a[3]);
  }
  return run;
}

void rewrite_sweep(const std::string& path, const SweepContents& c, const io::Provenance& prov) {
  io::replace_file(path, ".rewrite.tmp", [&](const std::string& tmp) {
    auto log = io::RunLog::create(tmp, prov, /*force=*/true);
    if (!c.runs_cols.empty()) declare_sweep_tables(log, c);
    log.start();
    for (const auto& [row, rec] : c.records) append_sweep_record(log, rec);
    log.close();
  }, "sweep log");
}

}  // namespace gaugelab::toys
