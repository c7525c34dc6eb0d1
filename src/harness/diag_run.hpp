// `gaugelab diag heads`: the grid runner over gauge family × κ (each cell OpenMP-parallel over its
// gauges, every draw seeded from (seed, cell, gauge), so results do not depend on the thread
// count), the HDF5 log (/tables/spread, one row per rule × transport × wrapper × κ × family) and the
// one-screen summary.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/diag_cell.hpp"
#include "harness/diag_options.hpp"
#include "harness/head_source.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::harness {

// Shared by the diag runners (diag heads, diag trajectory).
/// Keeps freed [d, r] temporaries in the heap: glibc returned each to the kernel and faulted it back in
/// (~10 % of the run time in a profile).
void keep_freed_memory();

/// The grid parallelises over gauges (OpenMP); Eigen's own threading of the few [d, r]-sized products
/// outside those loops only adds fork/join and spinning. One Eigen thread while the grid runs.
class EigenSingleThread {
 public:
  EigenSingleThread() : before_(Eigen::nbThreads()) { Eigen::setNbThreads(1); }
  ~EigenSingleThread() { Eigen::setNbThreads(before_); }
  EigenSingleThread(const EigenSingleThread&) = delete;
  EigenSingleThread& operator=(const EigenSingleThread&) = delete;

 private:
  int before_;
};

/// The random head of `o` (d_model, d_head, head_cond, biases), seeded from the run seed.
RandomHeadOptions random_options(const DiagOptions& o, std::uint64_t seed);

/// What every diag runner does before it writes: the settings checked, the head resolved (random, or through
/// `loader`: a bad checkpoint fails before any file is written), the output path prepared, freed memory kept.
struct DiagHead {
  core::AttentionHead<double> head;
  HeadData data;  // the teacher's head and the real inputs, when --teacher-checkpoint / --data are given
};
DiagHead prepare_diag_run(const DiagOptions& o, const io::RunFlags& flags, const CheckpointHeadLoader& loader,
                          const CheckpointInputsLoader& inputs = {});

/// The cells of the grid: every family × κ, except the orthogonal family which has κ = 1 only.
std::vector<CellSpec> grid_cells(const DiagOptions& o, std::uint64_t seed);

struct DiagRun {
  std::vector<CellResult> cells;
  std::string head_source;  // "random" or "CHECKPOINT layer L head H"
  double loss_before = 0;
  double seconds = 0;       // wall time of the grid (head, problem and log set-up excluded)
  double forward_error_max = 0;
};

/// Resolves the head (random, or through `loader` for --checkpoint; fails before any file is
/// written), runs the grid and writes the log to flags.out.
DiagRun run_diag_heads(const DiagOptions& o, const io::RunFlags& flags, const io::Provenance& prov,
                       const CheckpointHeadLoader& loader, const CheckpointInputsLoader& inputs = {});

/// Runs the grid on `head` without writing anything (tests, benchmarks).
DiagRun run_grid(const DiagOptions& o, const core::AttentionHead<double>& head, std::uint64_t seed);

/// The one-screen summary printed at the end of a run.
std::string format_diag_summary(const DiagRun& run, const DiagOptions& o);

}  // namespace gaugelab::harness
