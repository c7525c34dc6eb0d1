// Flags every result-producing verb shares (--out, --force, --threads, --seed) and what they mean.
#pragma once

#include <cstdint>
#include <string>

#include "io/options.hpp"

namespace gaugelab::io {

struct RunFlags {
  std::string out;          // result file (HDF5) or directory; empty: the verb's default under runs/
  bool force = false;       // allow replacing an existing --out
  int threads = 0;          // OpenMP (and LibTorch) threads; 0 = every core of this machine
  std::uint64_t seed = 0;   // master seed; every random draw of the run derives from it
};

/// Registers --out, --force, --threads, --seed on `opts` (defaults taken from `flags`).
void add_run_flags(Options& opts, RunFlags& flags, const std::string& out_help);

/// Sets the thread count for OpenMP and Eigen explicitly (LibTorch would otherwise force 1)
/// and returns the count in force. threads = 0 means every core.
int apply_threads(int threads);

/// Throws std::runtime_error naming the path if `path` exists and !force; creates missing
/// parent directories. Nothing existing is touched.
void prepare_output_path(const std::string& path, bool force);

/// Number of processors OpenMP sees.
int available_cores();

}  // namespace gaugelab::io
