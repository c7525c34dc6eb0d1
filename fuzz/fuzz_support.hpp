// Shared by the libFuzzer targets: the input as a file (for readers that take a path), and the rule
// every target checks — a reader may refuse its input only with the one-line error type it documents;
// any other exception escaping the target is a finding (libFuzzer reports it as a crash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

namespace gaugelab::fuzz {

/// Writes the input to a per-process file under $TMPDIR (default /tmp) with the given suffix, replaced
/// on every call; the path stays valid until the next call.
inline const std::string& input_file(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  static std::string path;
  const char* dir = std::getenv("TMPDIR");
  path = std::string(dir && *dir ? dir : "/tmp") + "/gaugelab-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();  // the fuzzing machine itself is broken: stop loudly
  if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  return path;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace gaugelab::fuzz
