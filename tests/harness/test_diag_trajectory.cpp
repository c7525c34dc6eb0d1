// `diag trajectory`: the multi-step runs from gauge-equivalent starts. Physics the result must show:
// SGD and covector-transported momentum with the full correction at every step stay on one orbit (separation
// at rounding over 24 steps, κ = 100); without it they separate by O(1); for diagonal gauges the diagonal
// correction between full steps is exact too, so every periodic schedule stays at rounding; for general gauges
// any uncorrected step moves the trajectories apart for good, so k = 2 already separates.
#include <catch2/catch.hpp>

#include "harness/diag_cell.hpp"
#include "harness_test_support.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Rounding of a 24-step trajectory at κ = 100: each step's correction solves with Grams of condition ≲ κ²,
// relative error ~ u·κ² ≈ 2e-12 a step, accumulated over the steps; 1e-9 leaves room, far below 0.1.
constexpr double kRoundOff = 1e-9;
constexpr double kApart = 0.1;

harness::TrajectoryCell cell_of(const std::string& family, const std::vector<std::string>& rules) {
  auto o = test::small_options({family}, {100}, rules, {"none"});
  o.momentum_transport = "covector";
  const harness::HeadDiagnostic diag(o, test::small_head(o), 3);
  return diag.run_trajectory_cell({family, 100, 11}, 24, {2, 4});
}

const harness::TrajectoryRow& find(const harness::TrajectoryCell& c, const std::string& rule, const std::string& schedule,
                                   std::int64_t period) {
  for (const auto& r : c.rows)
    if (r.rule == rule && r.schedule == schedule && r.period == period) return r;
  FAIL("no row " << rule << " " << schedule << " " << period);
  return c.rows.front();
}

}  // namespace

TEST_CASE("trajectory: the full correction keeps gauge-equivalent SGD and momentum runs on one orbit",
          "[harness][trajectory]") {
  const auto c = cell_of("general", {"sgd", "momentum"});
  for (const char* rule : {"sgd", "momentum"}) {
    const auto& full = find(c, rule, "full", 1);
    const auto& none = find(c, rule, "none", 0);
    REQUIRE(full.separation.size() == 24);
    INFO(rule << ": full " << full.separation.back().max << ", none " << none.separation.back().median);
    CHECK(full.failures == 0);
    for (const auto& s : full.separation) CHECK(s.max <= kRoundOff);
    CHECK(none.separation.back().median >= kApart);
    // General gauges: one uncorrected step in two is enough to leave the orbit for good.
    CHECK(find(c, rule, "periodic", 2).separation.back().median >= kApart);
  }
}

TEST_CASE("trajectory: for diagonal gauges the diagonal correction between full steps is exact",
          "[harness][trajectory]") {
  const auto c = cell_of("diagonal", {"sgd"});
  for (const std::int64_t k : {2, 4}) {
    INFO("k = " << k);
    CHECK(find(c, "sgd", "periodic", k).separation.back().max <= kRoundOff);
  }
  CHECK(find(c, "sgd", "none", 0).separation.back().median >= kApart);
}

}  // namespace GAUGELAB_TU
