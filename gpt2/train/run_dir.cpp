// A run directory's paths, its complete checkpoints and whether an earlier run there failed before its first
// step (run_dir.hpp).
#include "gpt2/train/run_dir.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

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

}  // namespace gaugelab::gpt2
