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

namespace {

namespace fs = std::filesystem;

// The absolute, link-resolved form of `p` (its missing tail kept as written), without a trailing slash.
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) r = fs::absolute(p, ec).lexically_normal();
  if (!r.has_filename() && r.has_parent_path()) r = r.parent_path();
  return r;
}

// Whether `inner` lies strictly below the directory `outer` (both resolved).
bool lies_below(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin(), o = outer.begin();
  for (; o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return i != inner.end();
}

// Whether walking `p` as the file system does passes through an entry (a link, a directory, the file itself) that
// lies strictly below `out` (resolved): removing or replacing `out` would delete that entry, and with a link the
// way to the input, wherever the link leads. Each name is looked up in the directory the walk has reached, its
// links followed, so `link/..` is the parent of where `link` leads and `link/.` is the link's target, both reached
// through the link's own entry.
bool walk_passes_below(const std::string& p, const fs::path& out) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  fs::path at = a.root_path();
  for (const fs::path& name : a.relative_path()) {
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      at = at.has_relative_path() ? at.parent_path() : at;  // `at` is resolved: its parent is the physical one
      continue;
    }
    const fs::path entry = at / name;
    if (lies_below(entry, out)) return true;
    at = resolved(entry.string());
  }
  return false;
}

}  // namespace

// Also a path inside an input directory that does not exist yet (`export CK --out CK/sub`): no verb writes into
// what it reads, whether or not the path is there already.
void refuse_output_over_inputs(const std::string& path, const std::vector<std::string>& inputs, const std::string& flag) {
  if (path.empty()) return;
  const fs::path out = resolved(path);
  std::error_code ec;
  const bool out_exists = fs::exists(out, ec);
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const fs::path in = resolved(input);
    const bool in_exists = fs::exists(in, ec);
    std::error_code eq;
    const bool same = out == in || (out_exists && in_exists && fs::equivalent(out, in, eq));
    if (same)
      throw UsageError(flag + " " + path + " is this command's input " + input + " (write the result elsewhere)");
    // The input itself below the output, or a link on the way to it there (replacing the output would delete it).
    if (lies_below(in, out) || walk_passes_below(input, out))
      throw UsageError(flag + " " + path + " holds this command's input " + input + " (write the result elsewhere)");
    if (fs::is_directory(in, ec) && lies_below(out, in))
      throw UsageError(flag + " " + path + (out_exists ? " is a file of" : " lies inside") + " this command's input " +
                       input + " (write the result elsewhere)");
  }
}

void prepare_output_path(const std::string& path, bool force, const std::vector<std::string>& inputs,
                         const std::string& flag) {
  if (path.empty()) throw UsageError("no output path given (" + flag + ")");
  refuse_output_over_inputs(path, inputs, flag);
  const fs::path p(path);
  std::error_code ec;
  if (fs::exists(p, ec) && !force)
    throw UsageError(flag + " " + path + " already exists (use --force to replace it)");
  if (p.has_parent_path()) {
    fs::create_directories(p.parent_path(), ec);
    if (ec) throw std::runtime_error("cannot create directory '" + p.parent_path().string() + "': " + ec.message());
  }
}

}  // namespace gaugelab::io
