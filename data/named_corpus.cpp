#include "data/named_corpus.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "io/options.hpp"

namespace gaugelab::data {

namespace fs = std::filesystem;

std::string assets_dir() {
  if (const char* a = std::getenv("GAUGELAB_ASSETS"); a && *a) return a;
  if (const char* c = std::getenv("GAUGELAB_CACHE"); c && *c) return (fs::path(c) / "assets").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "gaugelab" / "assets").string();
}

NamedCorpus named_corpus(const std::string& name, const std::string& dir, const std::vector<std::string>& val_works) {
  if (name != "shakespeare") throw io::UsageError("--corpus must be shakespeare (got '" + name + "')");
  const std::string root = dir.empty() ? (fs::path(assets_dir()) / "shakespeare").string() : dir;
  const std::string tail = "_gut.txt";
  std::vector<std::string> works;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string f = e.path().filename().string();
    if (e.is_regular_file() && f.size() > tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0)
      works.push_back(f.substr(0, f.size() - tail.size()));
  }
  if (ec || works.empty())
    throw std::runtime_error(root + ": the Shakespeare corpus is not installed (run scripts/install-deps.sh)");
  std::sort(works.begin(), works.end());
  NamedCorpus c;
  c.name = name;
  for (const std::string& v : val_works)
    if (!std::binary_search(works.begin(), works.end(), v))
      throw io::UsageError("--val-works: no work '" + v + "' in " + root + " (e.g. hamlet, sonnets)");
  for (const std::string& w : works) {
    const std::string path = (fs::path(root) / (w + tail)).string();
    const bool val = std::find(val_works.begin(), val_works.end(), w) != val_works.end();
    (val ? c.val_files : c.train_files).push_back(path);
  }
  if (c.train_files.empty())
    throw io::UsageError("--val-works holds all " + std::to_string(works.size()) + " works of " + root +
                         ": leave at least one for training");
  return c;
}

}  // namespace gaugelab::data
