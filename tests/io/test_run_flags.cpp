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

// An input is found as the file system walks its path: in `L/../a/x`, with L a link to b/deep, the `..` is b, so
// the input is b/a/x, not a/x as a lexical reading has it. Replacing --out deletes every entry below it, so an --out
// that holds any entry on the input's way (a link, however the path goes on from it: `/`, `/.`, `/..`, a name) is
// refused, and one the walk only seems to enter is not.
TEST_CASE("output over inputs: an input path through a link and '..' is where the file system finds it") {
  namespace fs = std::filesystem;
  const gaugelab::test::TempDir t;
  for (const char* d : {"a", "b/deep", "b/x/f", "b/a/x", "c"}) fs::create_directories(t.path / d);
  fs::create_directory_symlink(t.path / "b" / "deep", t.path / "L");
  fs::create_directory_symlink(t.path / "b" / "x", t.path / "a" / "L2");
  fs::create_directory_symlink(t.path / "c", t.path / "b" / "y");
  const auto refuse = [&](const std::string& out, const std::string& input) {
    io::refuse_output_over_inputs(t.file(out), {t.file(input)}, "--out");
  };
  const auto holds = Catch::Contains("holds this command's input");
  // Not held: the walk goes from L to b and never enters a (a lexical reading put the input at a/x and refused it).
  CHECK_NOTHROW(refuse("a", "L/../a/x"));
  CHECK_NOTHROW(refuse("a", "L/../a/x/"));
  CHECK_NOTHROW(refuse("a", "L/../x/f"));
  // Held: the walk reaches the link b/y through L/.. (a lexical reading, y, let it through).
  CHECK_THROWS_WITH(refuse("b", "L/../y"), holds);
  CHECK_THROWS_WITH(refuse("b", "L/../y/."), holds);
  // Held: a link in --out, however the path goes on from it, and anything reached through it.
  CHECK_THROWS_WITH(refuse("a", "a/L2"), holds);
  CHECK_THROWS_WITH(refuse("a", "a/L2/"), holds);
  CHECK_THROWS_WITH(refuse("a", "a/L2/."), holds);
  CHECK_THROWS_WITH(refuse("a", "a/L2/f"), holds);
  CHECK_THROWS_WITH(refuse("a", "a/L2/../deep"), holds);
  CHECK_THROWS_WITH(refuse("a", "L/../../a/L2"), holds);
  // Passing through --out itself (not below it) is not holding: the walk goes on from where --out leads.
  CHECK_NOTHROW(refuse("L", "L/../x"));
}

}  // namespace GAUGELAB_TU
