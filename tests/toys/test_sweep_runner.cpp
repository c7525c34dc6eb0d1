// The sweep runner's log equals the same runs done one by one, on 1 and on 2 threads.
#include "test_sweep_support.hpp"

#include "toys/sweep_points.hpp"

using namespace gaugelab;

TEST_CASE("sweep: every row equals the toy run directly with the same settings and seed", "[toys][sweep]") {
  test::TempDir dir;
  const std::string out = dir.file("sweep.h5");
  auto args = test::small_sweep_args();
  args.insert(args.end(), {"--seed", "7"});
  const auto res = test::run_sweep_to(out, args, 2);
  CHECK(res.rows_run == 12);
  CHECK(res.rows_skipped == 0);

  const auto c = test::contents_of(out);
  REQUIRE(c.records.size() == 12);
  CHECK(c.orphan_rows == 0);
  CHECK(c.runs_cols.at(0).name == "row");
  CHECK(c.runs_cols.at(1).name == "lr");
  CHECK(c.runs_cols.at(2).name == "lambda");
  const io::RunLogReader reader(out);
  CHECK(reader.root().kind == "sweep/relu");

  const double lrs[] = {5e-3, 2e-2}, lambdas[] = {0.0, 0.2};
  for (std::int64_t row = 0; row < 12; ++row) {
    INFO("row " << row);
    const std::int64_t point = row / 3, seed_index = row % 3;
    const double lr = lrs[point / 2], lambda = lambdas[point % 2];
    auto toy = toys::make_toy("relu");
    io::Options o("toy relu", "");
    toy->declare(o);
    o.set("steps", "300");
    o.set("log-every", "20");
    o.set("seeds", "3");
    o.set("lr", std::to_string(lr));
    o.set("lambda", std::to_string(lambda));
    o.validate();
    const toys::ToyRun direct = toy->run(7 + static_cast<std::uint64_t>(seed_index));

    const auto& rec = c.records.at(row);
    io::Row runs{row, lr, lambda};
    for (const auto& [k, v] : direct.metrics) runs.push_back(v);
    CHECK(test::same_rows({rec.runs}, {runs}));
    CHECK(std::get<std::int64_t>(rec.runs.at(3)) == 7 + seed_index);  // the relu toy's "seed" metric

    std::vector<io::Row> series;
    for (std::size_t t = 0; t < direct.steps.size(); ++t) {
      io::Row s{row, direct.steps[t]};
      for (const auto& v : direct.series) s.emplace_back(v[t]);
      series.push_back(s);
    }
    CHECK(test::same_rows(rec.series, series));
    std::vector<io::Row> arrays;
    for (const auto& [name, values] : direct.arrays)
      for (std::size_t i = 0; i < values.size(); ++i)
        arrays.push_back({row, name, static_cast<std::int64_t>(i), values[i]});
    CHECK(test::same_rows(rec.arrays, arrays));
    CHECK(!arrays.empty());
  }
}

TEST_CASE("sweep: 1 and 2 threads write the same tables (up to row order)", "[toys][sweep]") {
  test::TempDir dir;
  const std::string one = dir.file("one.h5"), two = dir.file("two.h5");
  test::run_sweep_to(one, test::small_sweep_args(), 1);
  test::run_sweep_to(two, test::small_sweep_args(), 2);
  test::check_same_records(test::contents_of(one), test::contents_of(two));
  CHECK(test::same_rows(test::table_rows(one, "points"), test::table_rows(two, "points")));
}

TEST_CASE("sweep: /tables/points holds the toy's own summary of each point's seeds", "[toys][sweep]") {
  test::TempDir dir;
  const std::string out = dir.file("sweep.h5");
  test::run_sweep_to(out, test::small_sweep_args(), 2);
  toys::SweepSettings s;
  const auto plan = test::plan_of(test::small_sweep_args(), s);
  const auto c = test::contents_of(out);
  const io::RunLogReader reader(out);
  const io::TableData points = reader.table("points");
  REQUIRE(points.rows == 4);
  for (std::int64_t p = 0; p < 4; ++p) {
    std::vector<toys::ToyRun> runs;
    for (std::int64_t k = 0; k < 3; ++k) runs.push_back(plan.toy(p).run(static_cast<std::uint64_t>(k)));
    const auto summary = plan.toy(p).summarize(runs);
    CHECK(points.i64("point")[static_cast<std::size_t>(p)] == p);
    CHECK(points.i64("runs")[static_cast<std::size_t>(p)] == 3);
    CHECK(points.f64("lr")[static_cast<std::size_t>(p)] == plan.point_values(p)[0]);
    for (const auto& [k, v] : summary) {
      INFO("point " << p << " key " << k);
      if (const auto* d = std::get_if<double>(&v)) {
        const double got = points.f64(k)[static_cast<std::size_t>(p)];
        CHECK((got == *d || (std::isnan(got) && std::isnan(*d))));
      } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
        CHECK(points.i64(k)[static_cast<std::size_t>(p)] == *i);
      } else {
        CHECK(points.str(k)[static_cast<std::size_t>(p)] == std::get<std::string>(v));
      }
    }
  }
  CHECK(test::summary_int(out, "rows_total") == 12);
  CHECK(test::summary_int(out, "complete") == 1);
}

TEST_CASE("sweep: rerunning a finished sweep skips every row, another config is refused", "[toys][sweep]") {
  test::TempDir dir;
  const std::string out = dir.file("sweep.h5");
  test::run_sweep_to(out, test::small_sweep_args(), 2);
  const auto before = test::contents_of(out);
  const auto again = test::run_sweep_to(out, test::small_sweep_args(), 2);
  CHECK(again.rows_run == 0);
  CHECK(again.rows_skipped == 12);
  test::check_same_records(before, test::contents_of(out));

  auto other = test::small_sweep_args();
  other.insert(other.end(), {"--hidden", "9"});
  CHECK_THROWS_WITH(test::run_sweep_to(out, other, 2),
                    Catch::Contains("holds another sweep") && Catch::Contains("--hidden 20 there, 9 here"));
}
