// Finishing a sweep log: the per-grid-point aggregates (/tables/points) and /summary.
//
// /tables/points has one row per grid point: point (i64), the grid values (f64), runs (seeds in the
// file), then what the toy's summarize() says over the point's seeds — the same figures `gaugelab
// toy` puts in /summary for one configuration. Keys a point's summary lacks are NaN (numbers) or
// "" (text). It is written only when the file holds every row of the sweep (an unsharded sweep at
// its end, or a merge): aggregates over part of a point's seeds would mislead.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/run_log.hpp"
#include "toys/sweep_log.hpp"
#include "toys/sweep_plan.hpp"

namespace gaugelab::toys {

struct PointsTable {
  std::vector<io::Column> cols;
  std::vector<io::Row> rows;  // one per grid point, in point order
};

/// Aggregates of every grid point; throws std::runtime_error naming a missing row.
PointsTable sweep_points(const SweepPlan& plan, const SweepContents& c);

/// True when `c` holds every row of the whole sweep (not just of the plan's shard).
bool holds_whole_sweep(const SweepPlan& plan, const SweepContents& c);

/// /summary of a sweep log: toy, grid, points, seeds_per_point, rows_total, shard, rows_in_shard,
/// rows_done, complete (1 when every row of the shard is present).
std::vector<std::pair<std::string, io::Cell>> sweep_summary(const SweepPlan& plan, const SweepContents& c);

/// Reopens the closed sweep log at `path` (holding `c`) and adds /tables/points (when it holds the
/// whole sweep and has none yet) and /summary (sweep_summary, then `extra`). Returns the summary.
std::vector<std::pair<std::string, io::Cell>> finish_sweep_log(
    const std::string& path, const SweepPlan& plan, const SweepContents& c,
    const std::vector<std::pair<std::string, io::Cell>>& extra);

}  // namespace gaugelab::toys
