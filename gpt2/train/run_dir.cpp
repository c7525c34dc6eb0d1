// A run directory's paths, its complete checkpoints, whether an earlier run there failed before its first step,
// and the line that says from which of its checkpoints a failed run continues (run_dir.hpp).
#include "gpt2/train/run_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "gpt2/dist/dist_failure.hpp"
#include "gpt2/train/api.hpp"
#include "io/run_log_reader.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;

std::string train_log_path(const std::string& out) { return out + "/log.h5"; }
std::string train_checkpoints_dir(const std::string& out) { return out + "/checkpoints"; }

std::string train_checkpoint_name(std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%08lld", static_cast<long long>(step));
  return buf;
}

namespace {

// Complete checkpoints, oldest first (names sort by step: fixed-width digits).
std::vector<fs::path> complete_checkpoints(const std::string& out) {
  std::vector<fs::path> found;
  const fs::path dir = train_checkpoints_dir(out);
  if (!fs::is_directory(dir)) return found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("step_", 0) == 0 && fs::exists(e.path() / "optimizer.safetensors"))
      found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::optional<std::string> latest_train_checkpoint(const std::string& out) {
  const fs::path dir = train_checkpoints_dir(out);
  std::vector<fs::path> leftovers;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind(".tmp-", 0) == 0) leftovers.push_back(e.path());
  for (const fs::path& p : leftovers) fs::remove_all(p);
  const std::vector<fs::path> all = complete_checkpoints(out);
  if (all.empty()) return std::nullopt;
  return all.back().string();
}

std::vector<std::string> train_checkpoints_newest_first(const std::string& out) {
  std::vector<std::string> out_dirs;
  const std::vector<fs::path> all = complete_checkpoints(out);
  for (auto it = all.rbegin(); it != all.rend(); ++it) out_dirs.push_back(it->string());
  return out_dirs;
}

// A directory whose earlier run failed before logging its first step: no checkpoint, and a log that
// is missing, empty or holds no rows. A new run may replace it without --force (nothing is lost).
bool failed_before_first_step(const std::string& out) {
  if (!train_checkpoints_newest_first(out).empty()) return false;
  const std::string log = train_log_path(out);
  std::error_code ec;
  if (!fs::exists(log, ec) || fs::file_size(log, ec) == 0) return true;
  try {
    return io::RunLogReader(log).series_length() == 0;
  } catch (const std::exception&) {
    return false;  // unreadable: not ours to judge, keep refusing
  }
}

namespace {

std::string resume_hint(const TrainOptions& o, std::int64_t last_checkpoint_step, bool read_run_dir,
                        bool peer_may_live) {
  // The run directory may hold a newer whole checkpoint than this rank saw finished: rank 0 writes it, then every
  // rank waits for it, and rank 0 may die between the two. Read only where its checkpoints are this run's: past the
  // set-up's barrier (rank 0 cleared an older run's before it) or in a run started with --resume. A peer that
  // timed out may still be writing one, so its step is the newest found, not the one --resume will load.
  if (read_run_dir) try {
      const std::vector<std::string> on_disk = train_checkpoints_newest_first(o.run.out);
      if (!on_disk.empty())  // ".../step_00001000"
        last_checkpoint_step = std::max<std::int64_t>(
            last_checkpoint_step, std::stoll(fs::path(on_disk.front()).filename().string().substr(5)));
    } catch (const std::exception&) {
      // an unreadable directory: what this rank saw stands
    }
  const std::string again = "gaugelab train --resume --out " + o.run.out;
  const std::string first = peer_may_live ? "stop every rank, then continue on every rank with: "
                                          : "continue on every rank with: ";
  if (last_checkpoint_step >= 0)
    return first + again + (peer_may_live ? " (the newest checkpoint found: step " : " (the last checkpoint: step ") +
           std::to_string(last_checkpoint_step) + ")";
  if (o.resume) return first + again;
  if (o.ckpt_every == 0) return "no checkpoint (--ckpt-every 0): start every rank again with --force";
  return "no checkpoint yet (--ckpt-every " + std::to_string(o.ckpt_every) +
         "): start every rank again (--force replaces the partial run)";
}

}  // namespace

DistFailure with_resume_hint(const DistFailure& failure, const TrainOptions& o, std::int64_t last_checkpoint_step,
                             bool read_run_dir) {
  const bool peer_may_live = failure.fault() == PeerFault::timed_out;
  return DistFailure(std::string(failure.what()) + "; " + resume_hint(o, last_checkpoint_step, read_run_dir, peer_may_live),
                     failure.lost_ranks(), failure.fault());
}

}  // namespace gaugelab::gpt2
