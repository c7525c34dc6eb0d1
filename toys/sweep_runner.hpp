// `gaugelab sweep NAME`: every row of a plan's shard, OpenMP-parallel over rows (dynamic schedule),
// appended to one HDF5 log as they finish (schema: toys/sweep_log.hpp).
//
// Resume: when --out exists (and no --force) it must be a sweep log of the same toy and the same
// configuration (SweepPlan::config(), compared whole; a difference is a one-line usage error naming
// it). Rows already in its /tables/runs are skipped; the rest are run and appended. A killed sweep
// rerun with the same command therefore finishes the missing rows and nothing else.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "io/provenance.hpp"
#include "toys/sweep_plan.hpp"

namespace gaugelab::toys {

struct SweepResult {
  std::vector<std::pair<std::string, io::Cell>> summary;  // what /summary holds
  std::int64_t rows_run = 0;      // run by this call
  std::int64_t rows_skipped = 0;  // found in the existing log
};

/// Runs the rows of plan.shard() not yet in settings.run.out (threads: as set by io::apply_threads).
/// `prov` is the root provenance of a new log (kind "sweep/<toy>", config plan.config()).
/// Progress lines go to `progress` (null: none).
SweepResult run_sweep(const SweepPlan& plan, const SweepSettings& settings, const io::Provenance& prov,
                      std::FILE* progress = stderr);

}  // namespace gaugelab::toys
