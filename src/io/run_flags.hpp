// Flags every result-producing verb shares (--out, --force, --threads, --seed) and what they mean.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/options.hpp"

namespace gaugelab::io {

struct RunFlags {
  std::string out;          // result file (HDF5) or directory; empty: the verb's default under runs/
  bool force = false;       // allow replacing an existing --out
  int threads = 0;          // OpenMP (and LibTorch) threads; 0 = the idle cores (idle_cores below): on a
                            // shared node, threads spinning on busy cores slow everyone (14x measured)
  std::uint64_t seed = 0;   // master seed; every random draw of the run derives from it
};

/// The largest --threads accepted: far above any node's cores (oversubscription never helps), far below
/// where asking the OpenMP runtime for threads fails (--threads 1e9 once reached libgomp and aborted).
inline constexpr int kMaxThreads = 1024;

/// Registers --out, --force, --threads, --seed on `opts` (defaults taken from `flags`).
void add_run_flags(Options& opts, RunFlags& flags, const std::string& out_help);

/// Cores not already busy: cores − round(load) (the 1-minute load average), at least 1; an unknown or
/// negative load counts as 0.
int idle_cores(int cores, double load);

/// Sets the thread count for OpenMP and Eigen explicitly (LibTorch would otherwise force 1)
/// and returns the count in force. threads = 0 means idle_cores(every core, the load now).
int apply_threads(int threads);

/// The one rule of every verb's output path: throws io::UsageError naming `flag` if `path` is one of the
/// verb's `inputs` (the same file or directory, also through a link), a directory above one of them, or an
/// existing file inside an input directory (a checkpoint's weights), or a directory holding a link that an
/// input is given as — with --force or without: no verb
/// writes over what it reads. Then, if `path` exists and !force, a usage error too. Creates missing parent
/// directories; nothing existing is touched.
void prepare_output_path(const std::string& path, bool force, const std::vector<std::string>& inputs = {},
                         const std::string& flag = "--out");
/// The first half of prepare_output_path alone (for outputs a verb names and checks itself).
void refuse_output_over_inputs(const std::string& path, const std::vector<std::string>& inputs,
                               const std::string& flag = "--out");

/// Number of processors OpenMP sees.
int available_cores();

}  // namespace gaugelab::io
