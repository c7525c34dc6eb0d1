// The tables of a sweep log (DESIGN §2, root kind "sweep/<toy>", config_json = SweepPlan::config()):
//   /tables/runs        one row per finished run: row (i64, = point × seeds + seed index), one f64
//                       column per grid flag (named after it), then the run's metrics (a metric named
//                       like a grid flag is stored as "metric_<name>")
//   /tables/run_series  long format, one row per logged step of every run: run (= row), step, series...
//   /tables/run_arrays  long format, every run's arrays: run, array (name), index, value
//   /tables/points      once the file holds every row of the sweep: point, grid values, runs (seeds
//                       present), then the toy's summary over the point's seeds (toy.summarize)
// Rows appear in the order runs finished; `gaugelab merge` writes them sorted by row.
// A run is written arrays first, series next and its /tables/runs row last, all between two
// flushes (toys/sweep_sink.hpp): a row present in /tables/runs means its run is complete. Rows
// of runs without a /tables/runs row ("orphans", left by a kill in the middle of a flush) are
// dropped when a sweep is resumed or merged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/provenance.hpp"
#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

/// One finished run as stored.
struct SweepRecord {
  io::Row runs;                 // its /tables/runs row: row, grid values, metrics
  std::vector<io::Row> series;  // its /tables/run_series rows, in step order
  std::vector<io::Row> arrays;  // its /tables/run_arrays rows
};

/// Everything a sweep log holds, by row.
struct SweepContents {
  std::vector<io::Column> runs_cols, series_cols, arrays_cols;  // empty: the log has no such table yet
  std::map<std::int64_t, SweepRecord> records;                   // by global row
  std::int64_t orphan_rows = 0;   // run_series/run_arrays rows whose run has no /tables/runs row
  bool has_points = false;        // /tables/points exists
  std::uint64_t points_rows = 0;  // its rows
};

/// Reads a sweep log's tables. Throws std::runtime_error if a row appears twice in /tables/runs.
SweepContents read_sweep(const io::RunLogReader& reader);

/// The metrics of a run as they are stored beside `grid` columns (renamed on a clash).
std::vector<std::pair<std::string, io::Cell>> stored_metrics(const ToyRun& run, const std::vector<std::string>& grid);

/// Declares runs, run_series and run_arrays from an example run (before start()).
void declare_sweep_tables(io::RunLog& log, const std::vector<std::string>& grid, const ToyRun& example);
/// Declares them with the columns of an existing log (merge, rewrite).
void declare_sweep_tables(io::RunLog& log, const SweepContents& like);

/// Appends one run (arrays, series, then its /tables/runs row). Not atomic by itself: the caller
/// keeps other appends and flushes out of the way (SweepSink does).
void append_sweep_run(io::RunLog& log, std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run,
                      const std::vector<std::string>& grid);
/// Appends a stored record as it is.
void append_sweep_record(io::RunLog& log, const SweepRecord& rec);

/// A stored record back as a ToyRun (metrics, series, arrays), `grid` naming the grid columns.
ToyRun to_toy_run(const SweepContents& c, const SweepRecord& rec, const std::vector<std::string>& grid);

/// Replaces the log at `path` by one holding exactly `c`'s records (sorted by row; no orphans,
/// no points table), through a temporary file renamed over it. Root attributes come from `prov`.
void rewrite_sweep(const std::string& path, const SweepContents& c, const io::Provenance& prov);

}  // namespace gaugelab::toys
