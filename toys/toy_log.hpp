// Writing toy runs into the HDF5 run log (DESIGN §2):
//   /tables/runs          one row per (grid point, seed): row (i64, the run's index, = `run` of
//                         run_series), the grid values, then the run's metrics
//   /tables/run_series    long format, one row per logged step of every run: run (row of /tables/runs),
//                         step, then each series — runs may differ in length (a diverged run stops early)
//   /series/<name>        the first run's series (quick looks; identical to its rows in run_series)
//   /arrays/<name>        the first run's arrays (e.g. the 200 invariance samples)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/run_log.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

/// Declares the tables (and, with `first_series`, /series and /arrays) from an example run.
void declare_toy_log(io::RunLog& log, const std::vector<std::string>& grid_columns, const ToyRun& example,
                     bool first_series);

/// Appends one run: its rows of /tables/run_series, then its row of /tables/runs (row, grid values,
/// metrics) — last, so a reader that sees the /tables/runs row knows the run's series came first.
void append_toy_run(io::RunLog& log, std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run);

/// Writes the example run's /series and /arrays (call once, after start()).
void write_first_series(io::RunLog& log, const ToyRun& run);

/// Writes the run's /arrays at the sizes `schema` declared them (its /series was streamed): an array shorter
/// than declared (a run that diverged logs fewer samples) is padded with NaN; an empty one is not written.
void write_first_arrays(io::RunLog& log, const ToyRun& run, const ToyRun& schema);

}  // namespace gaugelab::toys
