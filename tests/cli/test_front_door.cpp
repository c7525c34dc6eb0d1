// The executable's contract: exit codes and one-line errors (runs build/gaugelab as a process).
#include <catch2/catch.hpp>

#include <string>

#include "io/cpu_features.hpp"
#include "support/child.hpp"
#include "support/process.hpp"

namespace {

using Result = gaugelab::test::ProcessResult;

Result run(const std::string& args) { return gaugelab::test::run_gaugelab(args); }

std::size_t lines(const std::string& s) { return gaugelab::test::count_lines(s); }

}  // namespace

TEST_CASE("front door: help and version succeed", "[cli]") {
  auto r = run("--help");
  CHECK(r.status == 0);
  CHECK(r.output.find("train") != std::string::npos);
  CHECK(run("--version").status == 0);
  CHECK(run("info --help").status == 0);
}

// The line the grid runner reads (analysis/make_figures.py cpu_bf16) before a grid declared for a CPU with bf16
// matmul: the trainer's own reading, which each run's summary records.
TEST_CASE("front door: info names the CPU's bf16 matmul instructions as the trainer logs them", "[cli]") {
  const Result r = run("info");
  CHECK(r.status == 0);
  CHECK(r.output.find("\ncpu bf16   " + gaugelab::io::cpu_bf16_matmul_flags() + "\n") != std::string::npos);
}

TEST_CASE("front door: usage errors exit 2 with one line naming the problem", "[cli]") {
  auto r = run("nosuchverb");
  CHECK(r.status == 2);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("nosuchverb") != std::string::npos);
  r = run("info --bogus-flag 3");
  CHECK(r.status == 2);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("--bogus-flag") != std::string::npos);
  CHECK(run("").status == 2);
}

TEST_CASE("front door: plot, compare and tensorboard run their analysis scripts, errors in one line", "[cli]") {
  auto r = run("plot --help");
  CHECK(r.status == 0);
  CHECK(r.output.find("usage: gaugelab plot") != std::string::npos);
  r = run("compare no_such_run.h5");
  CHECK(r.status == 1);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("no_such_run.h5") != std::string::npos);
  r = gaugelab::test::run_command("GAUGELAB_ANALYSIS_PY=/no/such/python3 " + std::string(GAUGELAB_BINARY_DIR) +
                                  "/gaugelab compare no_such_run.h5");
  CHECK(r.status == 1);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("/no/such/python3") != std::string::npos);
  r = run("tensorboard --help");
  CHECK(r.status == 0);
  CHECK(r.output.find("usage: gaugelab tensorboard") != std::string::npos);
  r = run("tensorboard no_such_run.h5 --out " + std::string(GAUGELAB_BINARY_DIR) + "/test_tb_never_written");
  CHECK(r.status == 1);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("no_such_run.h5") != std::string::npos);
}

// The toy verbs must not pay for the GPT-2 tier: `gaugelab` links no LibTorch, and the verbs that need it
// re-exec the same command line in gaugelab-torch (same process id, exit status, output). A toy run
// that loaded LibTorch and its CUDA libraries peaked at ~490 MB; the light one at ~18 MB. Bound 50 MB
// (the issue's). Sanitizer builds are left out of the bound (their allocator's own memory is counted).
TEST_CASE("front door: a toy run does not load the GPT-2 tier (peak memory under 50 MB)", "[cli][light]") {
  const std::string bin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
  const std::string out = std::string(GAUGELAB_BINARY_DIR) + "/test_light_toy.h5";
  std::remove(out.c_str());
  const auto r = gaugelab::test::run_child(
      {bin, "toy", "relu", "--steps", "1", "--seeds", "1", "--gauges", "0", "--out", out}, {.limit_s = 60});
  INFO(r.output);
  REQUIRE(r.status == 0);
#ifndef GAUGELAB_SANITIZED
  CHECK(r.max_rss_kb < 50 * 1024);
#endif
  std::remove(out.c_str());
#ifdef GAUGELAB_TEST_WITH_TORCH
  // The hand-over: a GPT-2 verb through the light executable reaches the LibTorch half.
  const auto info = gaugelab::test::run_child({bin, "info"}, {.limit_s = 60});
  CHECK(info.status == 0);
  CHECK(info.output.find("libtorch   2.") != std::string::npos);
  const auto train = gaugelab::test::run_child({bin, "train", "--help"}, {.limit_s = 60});
  CHECK(train.status == 0);
  CHECK(train.output.find("usage: gaugelab train") != std::string::npos);
#endif
}
