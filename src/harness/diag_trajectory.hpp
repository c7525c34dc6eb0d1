// `gaugelab diag trajectory`: the multi-step counterpart of `diag heads` — how the represented trajectories
// from gauge-equivalent starts separate over K steps per rule × correction schedule (none, full every step,
// full every k steps), the curve that answers seed 003 §7's "how often is the full correction needed?".
// Log: /tables/trajectory, one row per rule × transport × schedule × κ × family × step.
#pragma once

#include <string>
#include <vector>

#include "harness/diag_cell.hpp"
#include "harness/diag_options.hpp"
#include "harness/head_source.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "io/run_log.hpp"

namespace gaugelab::harness {

struct TrajectoryRun {
  std::vector<TrajectoryCell> cells;
  double seconds = 0;  // wall time of the grid
};

std::vector<io::Column> trajectory_columns();

/// Resolves the head (as diag heads), runs every cell's trajectories and writes the log to flags.out.
TrajectoryRun run_diag_trajectory(const DiagOptions& o, const io::RunFlags& flags, const io::Provenance& prov,
                                  const CheckpointHeadLoader& loader,
                                  const CheckpointInputsLoader& inputs = {});

/// The one-screen summary: the separation after the last step per cell, rule and schedule.
std::string format_trajectory_summary(const TrajectoryRun& run, const DiagOptions& o);

}  // namespace gaugelab::harness
