// A folder of this test process's own, removed when the process ends: ctest runs a file's TEST_CASEs as
// parallel processes, and a corpus shared between them, rewritten by each one's `prepare --force`, could be
// read half-written by another.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace gaugelab::test {

struct OwnDir {
  std::string path;
  explicit OwnDir(const std::string& base) : path(base + "_" + std::to_string(::getpid())) {}
  ~OwnDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace gaugelab::test
