#include "gpt2/train/checkpoints.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

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

void save_train_checkpoint(const std::string& out, std::int64_t step, GPT& model, const TrainOptimizer& opt,
                           const Vocabulary& vocab, const nlohmann::json& trainer, std::int64_t keep) {
  const fs::path dir = train_checkpoints_dir(out);
  const std::string name = train_checkpoint_name(step);
  const fs::path tmp = dir / (".tmp-" + name), final_dir = dir / name;
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  save_checkpoint(tmp.string(), model, vocab, {{"trainer", trainer}});
  safetensors::write_file((tmp / "optimizer.safetensors").string(), opt.state_tensors(),
                          {{"format", "gaugelab-gpt2-adamw"}});
  fs::remove_all(final_dir);  // a checkpoint of the same step from an earlier attempt
  fs::rename(tmp, final_dir);
  std::vector<fs::path> all = complete_checkpoints(out);
  const auto n_keep = static_cast<std::size_t>(std::max<std::int64_t>(keep, 1));
  for (std::size_t i = 0; i + n_keep < all.size(); ++i) fs::remove_all(all[i]);
}

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

void load_optimizer_state(const std::string& checkpoint_dir, TrainOptimizer& opt) {
  opt.load_state(safetensors::read_file(checkpoint_dir + "/optimizer.safetensors"));
}

}  // namespace gaugelab::gpt2
