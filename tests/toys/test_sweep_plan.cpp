// The sweep's plan: grid parsing, point and row numbering, shards, recorded config.
#include <catch2/catch.hpp>

#include "toys/sweep_plan.hpp"

using namespace gaugelab;

namespace {

toys::GridArgs split(const std::vector<std::string>& args) {
  auto toy = toys::make_toy("relu");
  toys::SweepSettings s;
  io::Options opts("sweep relu", "");
  toys::declare_sweep_flags(opts, s);
  toy->declare(opts);
  return toys::split_grid_args(args, opts);
}

}  // namespace

TEST_CASE("sweep grid: comma lists of numeric flags become axes in the order given", "[toys][sweep]") {
  const auto g = split({"--lambda", "0,0.2", "--steps", "100", "--lr=5e-3,1e-2,2e-2", "--init", "he", "--hidden=7"});
  REQUIRE(g.axes.size() == 2);
  CHECK(g.axes[0].name == "lambda");
  CHECK(g.axes[0].values == std::vector<double>{0.0, 0.2});
  CHECK(g.axes[1].name == "lr");
  CHECK(g.axes[1].values == std::vector<double>{5e-3, 1e-2, 2e-2});
  CHECK(g.rest == std::vector<std::string>{"--steps", "100", "--init", "he", "--hidden=7"});
}

TEST_CASE("sweep grid: bad lists are usage errors naming the flag", "[toys][sweep]") {
  CHECK_THROWS_AS(split({"--lr", "1,,2"}), io::UsageError);
  CHECK_THROWS_WITH(split({"--lr", "1,,2"}), Catch::Contains("--lr") && Catch::Contains("empty item"));
  CHECK_THROWS_WITH(split({"--lr", ","}), Catch::Contains("empty"));
  CHECK_THROWS_WITH(split({"--lr", "1,x"}), Catch::Contains("not a number"));
  CHECK_THROWS_WITH(split({"--lr", "1,1"}), Catch::Contains("twice"));
  CHECK_THROWS_WITH(split({"--lr", "1,2", "--lr=3,4"}), Catch::Contains("twice as a grid"));
  CHECK_THROWS_WITH(split({"--lr", "1,2", "--lr", "3"}), Catch::Contains("both as a grid and as a single value"));
  CHECK_THROWS_WITH(split({"--seeds", "1,2"}), Catch::Contains("--seeds cannot be a grid"));
  CHECK_THROWS_WITH(split({"--threads", "1,2"}), Catch::Contains("--threads cannot be a grid"));
}

TEST_CASE("sweep shard: i/n with 0 <= i < n", "[toys][sweep]") {
  CHECK(toys::parse_shard("0/1").count == 1);
  const auto s = toys::parse_shard("2/5");
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  CHECK(s.owns(7));
  CHECK_FALSE(s.owns(8));
  for (const char* bad : {"3/2", "2/2", "-1/2", "1/0", "1", "a/b", "1/2/3", ""})
    CHECK_THROWS_AS(toys::parse_shard(bad), io::UsageError);
}

TEST_CASE("sweep plan: first axis slowest, row = point x seeds + seed index, shards partition the rows",
          "[toys][sweep]") {
  toys::SweepSettings s;
  const auto plan = *toys::plan_sweep(
      "relu", {"--lr", "1e-3,2e-3,3e-3", "--lambda", "0,0.5", "--seeds", "4", "--seed", "10", "--steps", "5"}, s);
  CHECK(plan.points() == 6);
  CHECK(plan.seeds() == 4);
  CHECK(plan.rows() == 24);
  CHECK(plan.point_values(0) == std::vector<double>{1e-3, 0.0});
  CHECK(plan.point_values(1) == std::vector<double>{1e-3, 0.5});
  CHECK(plan.point_values(2) == std::vector<double>{2e-3, 0.0});
  CHECK(plan.point_values(5) == std::vector<double>{3e-3, 0.5});
  CHECK(plan.point_of(9) == 2);
  CHECK(plan.seed_index_of(9) == 1);
  CHECK(plan.seed_of(9) == 11);
  CHECK(plan.shard_rows().size() == 24);

  std::vector<int> hits(24, 0);
  for (int i = 0; i < 5; ++i) {
    toys::SweepSettings si;
    const auto p = *toys::plan_sweep("relu", {"--lr", "1e-3,2e-3,3e-3", "--lambda", "0,0.5", "--seeds", "4",
                                              "--steps", "5", "--shard", std::to_string(i) + "/5"},
                                     si);
    for (auto r : p.shard_rows()) {
      CHECK(r % 5 == i);
      ++hits[static_cast<std::size_t>(r)];
    }
  }
  for (int h : hits) CHECK(h == 1);
}

TEST_CASE("sweep plan: out-of-range grid values and unknown toys are usage errors", "[toys][sweep]") {
  toys::SweepSettings s;
  CHECK_THROWS_WITH(toys::plan_sweep("relu", {"--lr", "1e-2,-1"}, s), Catch::Contains("--lr must be > 0"));
  CHECK_THROWS_WITH(toys::plan_sweep("relu", {"--hidden", "0,4"}, s), Catch::Contains("--hidden"));
  CHECK_THROWS_AS(toys::plan_sweep("no-such-toy", {}, s), io::UsageError);
  CHECK_THROWS_WITH(toys::plan_sweep("relu", {"--shard", "3/2"}, s), Catch::Contains("--shard"));
}

TEST_CASE("sweep plan: the recorded config rebuilds the same plan, differences are named", "[toys][sweep]") {
  toys::SweepSettings s;
  const auto plan =
      *toys::plan_sweep("relu", {"--lr", "5e-3,1e-2", "--steps", "123", "--init", "he", "--shard", "1/3"}, s);
  const auto again = toys::SweepPlan::from_config(plan.config());
  CHECK(again.config() == plan.config());
  CHECK(again.rows() == plan.rows());
  CHECK(again.shard().str() == "1/3");
  CHECK(toys::config_difference(plan.config(), again.config()).empty());

  toys::SweepSettings s2;
  const auto other =
      *toys::plan_sweep("relu", {"--lr", "5e-3,1e-2", "--steps", "124", "--init", "he", "--shard", "2/3"}, s2);
  CHECK(toys::config_difference(plan.config(), other.config(), {"shard"}) == "--steps 123 there, 124 here");
  CHECK(toys::config_difference(plan.config(), other.config()).find("steps") != std::string::npos);
  toys::SweepSettings s3;
  const auto grid = *toys::plan_sweep("relu", {"--lr", "5e-3,2e-2", "--steps", "123", "--init", "he"}, s3);
  CHECK(toys::config_difference(plan.config(), grid.config(), {"shard"}) ==
        "grid lr=0.005,0.01 there, lr=0.005,0.02 here");
}
