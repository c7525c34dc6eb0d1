#include "io/run_flags.hpp"

#include <Eigen/Core>
#include <filesystem>
#include <omp.h>
#include <stdexcept>

namespace gaugelab::io {

void add_run_flags(Options& opts, RunFlags& f, const std::string& out_help) {
  opts.add("out", &f.out, out_help)
      .add("force", &f.force, "replace an existing --out instead of refusing")
      .add("threads", &f.threads, "worker threads, 0 = all cores", Range::non_negative())
      .add("seed", &f.seed, "master random seed");
}

int available_cores() { return omp_get_num_procs(); }

int apply_threads(int threads) {
  const int n = threads > 0 ? threads : available_cores();
  omp_set_num_threads(n);
  Eigen::setNbThreads(n);
  return n;
}

void prepare_output_path(const std::string& path, bool force) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::runtime_error("no output path given (--out)");
  const fs::path p(path);
  std::error_code ec;
  if (fs::exists(p, ec) && !force)
    throw std::runtime_error("output '" + path + "' already exists (use --force to replace it)");
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create directory '" + p.parent_path().string() + "': " + ec.message());
  }
}

}  // namespace gaugelab::io
