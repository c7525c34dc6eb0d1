// The trainer tests' small corpus: `gaugelab prepare --synthetic` (200 documents, seed 1) into a directory.
#pragma once

#include <stdexcept>
#include <string>

#include "tests/support/process.hpp"

namespace gaugelab::test {

/// Prepares the synthetic corpus into `dir` (replacing what is there) and returns `dir`; throws with the
/// command's output when it fails.
inline std::string prepare_synthetic_corpus(const std::string& dir) {
  const ProcessResult r = run_gaugelab("prepare --synthetic --docs 200 --seed 1 --force --out " + dir);
  if (r.status != 0) throw std::runtime_error("prepare failed: " + r.output);
  return dir;
}

}  // namespace gaugelab::test
