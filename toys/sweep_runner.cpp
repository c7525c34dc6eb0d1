#include "toys/sweep_runner.hpp"

#include <omp.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <set>

#include "io/run_log_reader.hpp"
#include "io/writer_lock.hpp"
#include "toys/sweep_log.hpp"
#include "toys/sweep_points.hpp"
#include "toys/sweep_progress.hpp"
#include "toys/sweep_sink.hpp"

namespace gaugelab::toys {

namespace {

// The existing log at `path`, checked to be this plan's sweep; a different one is a usage error.
SweepContents existing_sweep(const std::string& path, const SweepPlan& plan) {
  const std::string hint = "; rerun with its flags, choose another --out, or use --force to replace it";
  std::optional<io::RunLogReader> reader;
  try {
    reader.emplace(path);
  } catch (const std::exception& e) {
    throw io::UsageError("'" + path + "' exists and cannot be resumed (" + e.what() + ")" + hint);
  }
  const io::RootAttrs root = reader->root();
  if (root.kind != "sweep/" + plan.toy_name())
    throw io::UsageError("'" + path + "' is a '" + root.kind + "' log, not a sweep of " + plan.toy_name() + hint);
  nlohmann::json there;
  try {
    there = root.config();
  } catch (const std::exception&) {
    throw io::UsageError("'" + path + "' has an unreadable config_json" + hint);
  }
  const std::string diff = config_difference(there, plan.config());
  if (!diff.empty()) throw io::UsageError("'" + path + "' holds another sweep (" + diff + ")" + hint);
  return read_sweep(*reader);
}

}  // namespace

SweepResult run_sweep(const SweepPlan& plan, const SweepSettings& settings, const io::Provenance& prov,
                      std::FILE* progress_out) {
  const std::string& path = settings.run.out;
  if (path.empty()) throw io::UsageError("--out must name a file");
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  std::set<std::int64_t> done;
  bool resume = false;
  if (exists && !settings.run.force) {
    // Held while the file is inspected and perhaps rewritten: a live writer makes this throw.
    const io::WriterLock lock = io::WriterLock::acquire(path);
    const SweepContents c = existing_sweep(path, plan);
    if (!c.runs_cols.empty()) {
      // Leftovers of a kill mid-flush (rows of runs not in /tables/runs, a partial points table)
      // would duplicate rows once those runs are redone: rewrite the file without them first.
      if (c.orphan_rows > 0 || (c.has_points && c.points_rows != static_cast<std::uint64_t>(plan.points())))
        rewrite_sweep(path, c, prov);
      for (const auto& [row, _] : c.records) done.insert(row);
      resume = true;
    }
  }
  std::vector<std::int64_t> pending;
  const auto owned = plan.shard_rows();
  for (auto row : owned)
    if (!done.count(row)) pending.push_back(row);

  SweepResult result;
  result.rows_skipped = static_cast<std::int64_t>(owned.size() - pending.size());
  if (progress_out) {
    std::fprintf(progress_out, "sweep %s: %lld point(s) x %lld seed(s) = %lld rows (%s), shard %s: %zu row(s) to run",
                 plan.toy_name().c_str(), static_cast<long long>(plan.points()), static_cast<long long>(plan.seeds()),
                 static_cast<long long>(plan.rows()), plan.grid_text().c_str(), plan.shard().str().c_str(),
                 pending.size());
    if (resume) std::fprintf(progress_out, ", %lld already in '%s'", static_cast<long long>(result.rows_skipped), path.c_str());
    std::fprintf(progress_out, ", %d thread(s)\n", omp_get_max_threads());
  }
  SweepProgress progress("sweep " + plan.toy_name() + (plan.shard().count > 1 ? " shard " + plan.shard().str() : ""),
                         static_cast<std::int64_t>(owned.size()), result.rows_skipped, settings.progress_s,
                         progress_out);
  {
    SweepSink sink(path, prov, plan.axis_names(), resume, /*replace=*/exists, settings.flush_s);
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    const auto n = static_cast<std::int64_t>(pending.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t i = 0; i < n; ++i) {
      if (failed.load()) continue;
      try {
        const std::int64_t row = pending[static_cast<std::size_t>(i)];
        const std::int64_t point = plan.point_of(row);
        const ToyRun run = plan.toy(point).run(plan.seed_of(row));
        sink.add(row, plan.point_values(point), run);
        progress.tick();
      } catch (...) {
#pragma omp critical(gaugelab_sweep_error)
        if (!error) error = std::current_exception();
        failed.store(true);
      }
    }
    sink.close();  // what finished before a failure stays in the log
    if (error) std::rethrow_exception(error);
  }
  progress.finish();
  result.rows_run = progress.done_here();

  SweepContents c;
  {
    const io::RunLogReader reader(path);
    c = read_sweep(reader);
  }
  const double elapsed = progress.elapsed_s();
  result.summary = finish_sweep_log(
      path, plan, c,
      {{"rows_run", result.rows_run},
       {"rows_skipped", result.rows_skipped},
       {"elapsed_s", elapsed},
       {"rows_per_s", elapsed > 0 ? static_cast<double>(result.rows_run) / elapsed : 0.0}});
  return result;
}

}  // namespace gaugelab::toys
