// Shared by the data tests: the GPT-2 tokenizer loaded once from the installed ranks file, or a
// visible skip when the file is missing (`make test` installs it, so CI always runs these).
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "data/tokenizer.hpp"

namespace gaugelab::data::testing {

inline const std::string& ranks_path() {
  static const std::string p = Gpt2Tokenizer::default_ranks_path();
  return p;
}

/// The tokenizer, or nullptr after a WARN that says the test is skipped and why.
inline const Gpt2Tokenizer* tokenizer_or_skip() {
  static const std::unique_ptr<Gpt2Tokenizer> tok = []() -> std::unique_ptr<Gpt2Tokenizer> {
    if (!std::filesystem::exists(ranks_path())) return nullptr;
    return std::make_unique<Gpt2Tokenizer>(Gpt2Tokenizer::from_tiktoken(ranks_path()));
  }();
  if (!tok)
    WARN("SKIPPED: GPT-2 ranks file not found at " << ranks_path()
                                                   << " (scripts/install-deps.sh puts it there; GAUGELAB_ASSETS overrides the directory)");
  return tok.get();
}

/// A fresh empty directory under the build tree, removed again by the destructor.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::path(GAUGELAB_BINARY_DIR) / "test-tmp" / "data" / name;
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace gaugelab::data::testing
