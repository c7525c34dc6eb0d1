#include "io/run_flags.hpp"

#include <Eigen/Core>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <omp.h>
#include <stdexcept>

namespace gaugelab::io {

void add_run_flags(Options& opts, RunFlags& f, const std::string& out_help) {
  opts.add("out", &f.out, out_help)
      .add("force", &f.force, "replace an existing --out instead of refusing")
      .add("threads", &f.threads,
           "worker threads, 0 = the idle cores (cores minus the 1-minute load, at least 1); at most " +
               std::to_string(kMaxThreads),
           Range::closed(0, kMaxThreads))
      .add("seed", &f.seed, "master random seed");
}

int available_cores() { return omp_get_num_procs(); }

int idle_cores(int cores, double load) {
  if (!(load >= 0) || !std::isfinite(load)) load = 0;  // load unknown: assume an idle machine
  const int busy = static_cast<int>(std::lround(load));
  return cores - busy >= 1 ? cores - busy : 1;
}

int apply_threads(int threads) {
  double load[1] = {0};
  const int n = threads > 0 ? threads : idle_cores(available_cores(), getloadavg(load, 1) == 1 ? load[0] : 0);
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
