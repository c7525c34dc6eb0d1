// Shards joined by `merge` equal one unsharded sweep; bad shard sets are refused naming the problem.
#include "test_sweep_support.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>

#include "toys/merge_shards.hpp"

using namespace gaugelab;

namespace {

std::vector<std::string> with_shard(const std::string& shard) {
  auto a = test::small_sweep_args();
  a.insert(a.end(), {"--shard", shard});
  return a;
}

io::Provenance merge_prov() { return {"", {"gaugelab", "merge"}, {}, 0, 1}; }

}  // namespace

TEST_CASE("merge: shard 0/2 + 1/2 equals the unsharded sweep", "[toys][sweep][merge]") {
  test::TempDir dir;
  const std::string whole = dir.file("whole.h5"), s0 = dir.file("s0.h5"), s1 = dir.file("s1.h5"),
                    merged = dir.file("merged.h5");
  test::run_sweep_to(whole, test::small_sweep_args(), 2);
  const auto r0 = test::run_sweep_to(s0, with_shard("0/2"), 2);
  const auto r1 = test::run_sweep_to(s1, with_shard("1/2"), 1);
  CHECK(r0.rows_run == 6);
  CHECK(r1.rows_run == 6);
  CHECK(test::contents_of(s0).records.begin()->first == 0);
  CHECK(test::contents_of(s1).records.begin()->first == 1);
  CHECK_FALSE(io::RunLogReader(s0).has_table("points"));  // aggregates need every seed of a point
  CHECK(test::summary_int(s0, "complete") == 1);

  toys::merge_sweeps({s1, s0}, merged, false, merge_prov());
  test::check_same_records(test::contents_of(whole), test::contents_of(merged));
  CHECK(test::same_rows(test::table_rows(whole, "points"), test::table_rows(merged, "points")));
  {
    // The merged file is sorted by row (the unsharded one is in completion order).
    const io::RunLogReader m(merged);
    const auto rows = m.table("runs").i64("row");
    CHECK(std::is_sorted(rows.begin(), rows.end()));
    const auto series_runs = m.table("run_series").i64("run");
    CHECK(std::is_sorted(series_runs.begin(), series_runs.end()));
    CHECK(m.root().kind == "sweep/relu");
    CHECK(m.root().config() == io::RunLogReader(whole).root().config());
  }
  CHECK(test::summary_int(merged, "rows_done") == 12);
  CHECK(test::summary_int(merged, "merged_from") == 2);

  // An existing output is not replaced without force.
  CHECK_THROWS_WITH(toys::merge_sweeps({s0, s1}, merged, false, merge_prov()), Catch::Contains("already exists"));
  CHECK_NOTHROW(toys::merge_sweeps({s0, s1}, merged, true, merge_prov()));
}

TEST_CASE("merge: a missing shard, a duplicated one, or another sweep is refused by name", "[toys][sweep][merge]") {
  test::TempDir dir;
  const std::string s0 = dir.file("s0.h5"), s1 = dir.file("s1.h5"), copy = dir.file("s0copy.h5"),
                    other = dir.file("other.h5"), out = dir.file("out.h5");
  test::run_sweep_to(s0, with_shard("0/2"), 2);
  test::run_sweep_to(s1, with_shard("1/2"), 2);
  std::filesystem::copy_file(s0, copy);
  std::vector<std::string> other_args = {"--lr",  "5e-3,2e-2", "--lambda=0,0.2", "--seeds", "3",
                                         "--steps", "200",       "--log-every",    "20",      "--shard", "1/2"};
  test::run_sweep_to(other, other_args, 2);

  CHECK_THROWS_WITH(toys::merge_sweeps({s0}, out, false, merge_prov()),
                    Catch::Contains("6 of 12 rows missing") && Catch::Contains("row 1 ") &&
                        Catch::Contains("no shard given owns it"));
  CHECK_THROWS_WITH(toys::merge_sweeps({s0, s1, copy}, out, false, merge_prov()),
                    Catch::Contains("row 0 ") && Catch::Contains("is in both") && Catch::Contains("s0copy.h5"));
  CHECK_THROWS_WITH(toys::merge_sweeps({s0, other}, out, false, merge_prov()),
                    Catch::Contains("not a shard of the same sweep") && Catch::Contains("--steps 300 there, 200 here"));
  // A missing shard is a run-time failure (exit 1: the files, not the command line, are wrong).
  bool usage = false, runtime = false;
  try {
    toys::merge_sweeps({s0, dir.file("absent.h5")}, out, false, merge_prov());
  } catch (const io::UsageError&) {
    usage = true;
  } catch (const std::runtime_error& e) {
    runtime = std::string(e.what()).find("absent.h5") != std::string::npos;
  }
  CHECK_FALSE(usage);
  CHECK(runtime);
  CHECK_THROWS_WITH(toys::merge_sweeps({s0, s1}, s0, true, merge_prov()), Catch::Contains("is this command's input"));
  CHECK_FALSE(std::filesystem::exists(out));
}
