// Shared by the sweep tests: a small relu sweep, running it in-process, and comparing two sweep logs
// record by record (rows sorted, NaN equal to NaN: the comparison is exact, not within a tolerance,
// because every run is deterministic and written as computed).
#pragma once

#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/run_log_reader.hpp"
#include "tests/io/temp_dir.hpp"
#include "toys/sweep_log.hpp"
#include "toys/sweep_plan.hpp"
#include "toys/sweep_runner.hpp"

namespace gaugelab::test {

/// A relu sweep small enough for a unit test: 2 x 2 grid x 3 seeds = 12 rows of 300 steps.
inline std::vector<std::string> small_sweep_args() {
  return {"--lr", "5e-3,2e-2", "--lambda=0,0.2", "--seeds", "3", "--steps", "300", "--log-every", "20"};
}

inline toys::SweepPlan plan_of(const std::vector<std::string>& args, toys::SweepSettings& s) {
  auto plan = toys::plan_sweep("relu", args, s);
  REQUIRE(plan.has_value());
  return std::move(*plan);
}

/// Runs `args` (+ --shard etc. inside them) into `out` on `threads` OpenMP threads, silently.
inline toys::SweepResult run_sweep_to(const std::string& out, std::vector<std::string> args, int threads) {
  args.insert(args.end(), {"--out", out});
  toys::SweepSettings s;
  const auto plan = plan_of(args, s);
  omp_set_num_threads(threads);
  io::Provenance prov{"sweep/relu", {"test"}, plan.config(), s.run.seed, threads};
  return toys::run_sweep(plan, s, prov, nullptr);
}

inline toys::SweepContents contents_of(const std::string& path) {
  const io::RunLogReader r(path);
  return toys::read_sweep(r);
}

inline bool same_cell(const io::Cell& a, const io::Cell& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return (std::isnan(*x) && std::isnan(y)) || *x == y;
  }
  return a == b;
}

inline bool same_rows(const std::vector<io::Row>& a, const std::vector<io::Row>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (std::size_t k = 0; k < a[i].size(); ++k)
      if (!same_cell(a[i][k], b[i][k])) return false;
  }
  return true;
}

/// Every record of `a` equals the same row's record of `b`, and both hold the same rows.
inline void check_same_records(const toys::SweepContents& a, const toys::SweepContents& b) {
  REQUIRE(a.records.size() == b.records.size());
  REQUIRE(a.runs_cols.size() == b.runs_cols.size());
  for (const auto& [row, ra] : a.records) {
    INFO("row " << row);
    const auto it = b.records.find(row);
    REQUIRE(it != b.records.end());
    CHECK(same_rows({ra.runs}, {it->second.runs}));
    CHECK(same_rows(ra.series, it->second.series));
    CHECK(same_rows(ra.arrays, it->second.arrays));
  }
}

/// A table's rows as cells, for exact comparison.
inline std::vector<io::Row> table_rows(const std::string& path, const std::string& table) {
  const io::RunLogReader r(path);
  const io::TableData t = r.table(table);
  std::vector<io::Row> rows(t.rows);
  for (const auto& col : t.data)
    for (std::size_t i = 0; i < t.rows; ++i) {
      if (const auto* d = std::get_if<std::vector<double>>(&col)) rows[i].emplace_back((*d)[i]);
      else if (const auto* n = std::get_if<std::vector<std::int64_t>>(&col)) rows[i].emplace_back((*n)[i]);
      else rows[i].emplace_back(std::get<std::vector<std::string>>(col)[i]);
    }
  return rows;
}

inline std::int64_t summary_int(const std::string& path, const std::string& key) {
  const io::RunLogReader r(path);
  const auto s = r.summary();
  const auto it = s.find(key);
  REQUIRE(it != s.end());
  return std::get<std::int64_t>(it->second);
}

}  // namespace gaugelab::test
