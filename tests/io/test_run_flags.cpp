// --threads 0 on a shared machine: the idle cores, not every core (threads spinning on busy cores made
// tiny training 14x slower on a loaded 2-core machine).
#include <catch2/catch.hpp>

#include <cmath>

#include "io/run_flags.hpp"
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

}  // namespace GAUGELAB_TU
