// The executable's contract: exit codes and one-line errors (runs build/gaugelab as a process).
#include <catch2/catch.hpp>

#include <string>

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

TEST_CASE("front door: plot and compare run their analysis scripts, errors in one line", "[cli]") {
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
}
