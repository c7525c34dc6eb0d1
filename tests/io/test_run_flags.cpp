// --threads 0 on a shared machine: the idle cores, not every core (threads spinning on busy cores made
// tiny training 14x slower on a loaded 2-core machine).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "io/run_flags.hpp"
#include "temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;

TEST_CASE("threads: 0 means the cores the load leaves idle, at least one") {
  struct Case {
    int cores;
    double load;
    int want;
  };
  const Case cases[] = {
      {2, 0.0, 2},  {2, 0.4, 2},  {2, 0.6, 1}, {2, 1.6, 1},   {2, 8.0, 1},       // a busy 2-core machine: 1
      {16, 3.4, 13}, {16, 0.0, 16}, {1, 0.0, 1}, {4, -1.0, 4}, {4, std::nan(""), 4},  // unknown load: idle
  };
  for (const Case& c : cases) {
    CAPTURE(c.cores, c.load);
    CHECK(io::idle_cores(c.cores, c.load) == c.want);
  }
  const int n = io::apply_threads(0);
  CHECK(n >= 1);
  CHECK(n <= io::available_cores());
  CHECK(io::apply_threads(3) == 3);  // an explicit count is kept
}

// An input given through a link is where the file system walks it: in `a/L/../x`, with L a link to b/deep, the
// `..` is b, so the input is b/x, which --out a does not hold (a lexical reading, a/x, refused it); a link inside
// --out that an input is given as is still refused (replacing --out would delete it).
TEST_CASE("output over inputs: an input path through a link and '..' is where the file system finds it") {
  namespace fs = std::filesystem;
  const gaugelab::test::TempDir t;
  fs::create_directories(t.path / "a");
  fs::create_directories(t.path / "b" / "deep");
  fs::create_directories(t.path / "b" / "x");
  fs::create_directory_symlink(t.path / "b" / "deep", t.path / "a" / "L");
  fs::create_directory_symlink(t.path / "b" / "x", t.path / "a" / "L2");
  const std::string out = t.file("a");
  CHECK_NOTHROW(io::refuse_output_over_inputs(out, {t.file("a/L/../x")}, "--out"));
  CHECK_NOTHROW(io::refuse_output_over_inputs(out, {t.file("a/L/../x/")}, "--out"));
  CHECK_THROWS_WITH(io::refuse_output_over_inputs(out, {t.file("a/L2")}, "--out"),
                    Catch::Contains("holds this command's input"));
  CHECK_THROWS_WITH(io::refuse_output_over_inputs(out, {t.file("a/L2/")}, "--out"),
                    Catch::Contains("holds this command's input"));
  CHECK_THROWS_WITH(io::refuse_output_over_inputs(out, {t.file("a/L/../../a/L2")}, "--out"),
                    Catch::Contains("holds this command's input"));
  CHECK_THROWS_WITH(io::refuse_output_over_inputs(t.file("b"), {t.file("a/L/..")}, "--out"),
                    Catch::Contains("is this command's input"));
}

}  // namespace GAUGELAB_TU
