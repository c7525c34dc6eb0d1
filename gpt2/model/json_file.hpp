// A JSON file read and written whole: config.json of our checkpoints and of Hugging Face directories, and the
// vocabulary beside them (vocab_ids.hpp). Errors name the path; a write goes through a temporary file and a rename.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "io/atomic_file.hpp"
#include "io/fail_at.hpp"

namespace gaugelab::gpt2 {

inline constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;  // a GPT-2 config.json is under 2 KB

/// Reads a JSON file; errors name the path.
inline nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) io::fail_at(path, "cannot read (" + ec.message() + ")");
  if (size > kMaxConfigBytes) io::fail_at(path, "too large for a config file (" + std::to_string(size) + " bytes)");
  std::ifstream in(path);
  if (!in) io::fail_at(path, "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    io::fail_at(path, std::string("not valid JSON (") + e.what() + ")");
  }
}

/// Writes JSON (indented) through a temporary file and a rename.
inline void write_json_file(const std::string& path, const nlohmann::json& j) {
  const std::string text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  io::write_atomically(path, text.data(), text.size(), path);
}

}  // namespace gaugelab::gpt2
