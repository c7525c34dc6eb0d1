// Run log schema round trip (writer -> C++ reader), overwrite protection, and error messages.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include <fstream>
#include <regex>

#include "io/build_info.hpp"
#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::io;
using gaugelab::test::TempDir;

namespace {

Provenance example_provenance() {
  Provenance p;
  p.kind = "toy/relu";
  p.argv = {"gaugelab", "toy", "relu", "--lr", "0.1", "--name", "a b", "--note", "it's"};
  p.config = {{"lr", 0.1}, {"name", "a b"}, {"steps", 100}};
  p.seed = (std::uint64_t{1} << 63) + 5;  // above int64 range: must survive as uint64
  p.threads = 2;
  return p;
}

// The error message of `fn`, which must throw std::runtime_error.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  FAIL("expected a std::runtime_error");
  return {};
}

}  // namespace

TEST_CASE("run log: every part of the schema round-trips through the C++ reader", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("sub/dir/run.h5");  // parent directories are created
  {
    RunLog log = RunLog::create(path, example_provenance(), false);
    log.declare_series({"loss", "lr"});
    log.declare_heads({"s_q", "s_k"}, 2, 3);
    log.declare_table("runs", {{"lr", DType::f64}, {"seed", DType::i64}, {"status", DType::str, 8}});
    log.declare_array("spectrum", {2, 3});
    log.declare_array("ids", {4}, DType::i64);
    log.declare_rows_array("samples", {3});
    log.start();
    CHECK(log.started());
    for (int i = 0; i < 10; ++i) log.append_series(10 * i, {1.0 / (1 + i), 0.5});
    log.append_series_named(100, std::map<std::string, double>{{"lr", 0.25}, {"loss", -1.0}});
    for (int r = 0; r < 4; ++r) {
      gaugelab::core::Mat<double> q(2, 3), k(2, 3);  // [layers, heads]
      for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h) {
          q(l, h) = r + 0.1 * l + 0.01 * h;
          k(l, h) = -q(l, h);
        }
      log.append_heads(r * 5, {q, k});
    }
    for (int i = 0; i < 5; ++i)
      log.append_row("runs", {Cell(0.1 * i), Cell(std::int64_t{i}), Cell(i % 2 ? "ok" : "diverged")});
    log.append_row("runs", {Cell(std::int64_t{7}), Cell(std::int64_t{-1}), Cell("exactly8")});  // int fills f64
    const double spectrum[] = {1, 2, 3, 4, 5, 6};
    log.write_array("spectrum", spectrum, 6);
    const std::int64_t ids[] = {3, 1, 4, 1};
    log.write_array("ids", ids, 4);
    const double samples[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    log.append_array_rows("samples", samples, 2);
    log.append_array_rows("samples", samples + 6, 3);
    log.set_summary("final_loss", 0.125);
    log.set_summary("n_rows", std::int64_t{6});
    log.set_summary("verdict", std::string("stable"));
    log.set_summary("verdict", std::string("unstable"));  // replaced, not duplicated
    CHECK(log.series_rows() == 11);
    CHECK(log.table_rows("runs") == 6);
    log.close();
    log.close();  // idempotent
  }
  RunLogReader r(path);
  const RootAttrs root = r.root();
  CHECK(root.gaugelab_version == kVersion);
  CHECK(root.git_sha == git_sha());
  CHECK(root.kind == "toy/relu");
  CHECK(root.command == "gaugelab toy relu --lr 0.1 --name 'a b' --note 'it'\\''s'");
  CHECK(root.config() == example_provenance().config);
  CHECK(std::regex_match(root.created_utc, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  CHECK_FALSE(root.host.empty());
  CHECK(root.threads == 2);
  CHECK(root.seed == (std::uint64_t{1} << 63) + 5);

  const SeriesData s = r.series();
  REQUIRE(s.names == std::vector<std::string>{"loss", "lr"});
  REQUIRE(s.step.size() == 11);
  for (int i = 0; i < 10; ++i) {
    CHECK(s.step[i] == 10 * i);
    CHECK(s.at("loss")[i] == 1.0 / (1 + i));  // float64 stored exactly
    CHECK(s.at("lr")[i] == 0.5);
  }
  CHECK(s.step[10] == 100);
  CHECK(s.at("loss")[10] == -1.0);
  CHECK(s.at("lr")[10] == 0.25);
  CHECK_THROWS_AS(s.at("nope"), std::out_of_range);

  CHECK(r.heads_names() == std::vector<std::string>{"s_q", "s_k"});
  CHECK(r.heads_step() == std::vector<std::int64_t>{0, 5, 10, 15});
  const HeadsData q = r.heads("s_q"), k = r.heads("s_k");
  REQUIRE(q.records == 4);
  REQUIRE(q.layers == 2);
  REQUIRE(q.heads == 3);
  for (std::uint64_t rec = 0; rec < 4; ++rec)
    for (std::uint64_t l = 0; l < 2; ++l)
      for (std::uint64_t h = 0; h < 3; ++h) {
        CHECK(q.at(rec, l, h) == static_cast<double>(rec) + 0.1 * l + 0.01 * h);
        CHECK(k.at(rec, l, h) == -q.at(rec, l, h));
      }

  CHECK(r.table_names() == std::vector<std::string>{"runs"});
  CHECK(r.has_table("runs"));
  const TableData t = r.table("runs");
  REQUIRE(t.rows == 6);
  REQUIRE(t.columns.size() == 3);
  CHECK(t.columns[2].name == "status");
  CHECK(t.columns[2].type == DType::str);
  CHECK(t.columns[2].width == 8);
  CHECK(t.f64("lr") == std::vector<double>{0.0, 0.1, 0.2, 0.1 * 3, 0.4, 7.0});
  CHECK(t.i64("seed") == std::vector<std::int64_t>{0, 1, 2, 3, 4, -1});
  CHECK(t.str("status") == std::vector<std::string>{"diverged", "ok", "diverged", "ok", "diverged", "exactly8"});
  CHECK_THROWS(t.i64("lr"));

  CHECK(r.array_names() == std::vector<std::string>{"ids", "samples", "spectrum"});
  const auto spec = r.array("spectrum");
  CHECK(spec.shape == std::vector<std::uint64_t>{2, 3});
  CHECK(spec.values == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(r.array_i64("ids").values == std::vector<std::int64_t>{3, 1, 4, 1});
  const auto samples = r.array("samples");
  CHECK(samples.shape == std::vector<std::uint64_t>{5, 3});
  CHECK(samples.values == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14});

  const auto sum = r.summary();
  REQUIRE(sum.size() == 3);
  CHECK(std::get<double>(sum.at("final_loss")) == 0.125);
  CHECK(std::get<std::int64_t>(sum.at("n_rows")) == 6);
  CHECK(std::get<std::string>(sum.at("verdict")) == "unstable");
}

TEST_CASE("run log: refuses to overwrite an existing file unless forced", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  {
    RunLog log = RunLog::create(path, example_provenance(), false);
    log.declare_series({"old"});
    log.append_series(0, {1.0});
  }
  const std::string msg = error_of([&] { RunLog::create(path, example_provenance(), false); });
  CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("already exists"));
  CHECK(RunLogReader(path).series_names() == std::vector<std::string>{"old"});  // untouched

  Provenance p = example_provenance();
  p.kind = "toy/new";
  RunLog::create(path, p, true).close();
  RunLogReader r(path);
  CHECK(r.root().kind == "toy/new");
  CHECK(r.series_names().empty());
  CHECK(r.series_length() == 0);
}

TEST_CASE("run log: bad files give one-line errors naming the file and the problem", "[io][run_log]") {
  TempDir dir;
  auto one_line = [](const std::string& m) { return m.find('\n') == std::string::npos; };

  const std::string missing = dir.file("missing.h5");
  std::string msg = error_of([&] { RunLogReader r(missing); });
  CHECK_THAT(msg, Catch::Contains(missing) && Catch::Contains("no such file"));
  msg = error_of([&] { RunLog::open_append(missing); });
  CHECK_THAT(msg, Catch::Contains(missing) && Catch::Contains("no such file"));

  const std::string text = dir.file("text.h5");
  std::ofstream(text) << "not hdf5\n";
  msg = error_of([&] { RunLogReader r(text); });
  CHECK_THAT(msg, Catch::Contains(text) && Catch::Contains("not an HDF5 file"));
  CHECK(one_line(msg));

  const std::string plain = dir.file("plain.h5");
  H5Fclose(H5Fcreate(plain.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  msg = error_of([&] { RunLogReader r(plain); });
  CHECK_THAT(msg, Catch::Contains(plain) && Catch::Contains("not a gaugelab run log"));

  const std::string path = dir.file("run.h5");
  {
    RunLog log = RunLog::create(path, example_provenance(), false);
    log.declare_array("spectrum", {2});
    const double v[] = {1, 2};
    log.write_array("spectrum", v, 2);
  }
  RunLogReader r(path);
  msg = error_of([&] { r.array("nope"); });
  CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("missing dataset /arrays/nope"));
  msg = error_of([&] { r.table("nope"); });
  CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("missing table /tables/nope"));
  msg = error_of([&] { r.array_i64("spectrum"); });
  CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("/arrays/spectrum holds floats"));
  msg = error_of([&] { r.heads("s_q"); });
  CHECK_THAT(msg, Catch::Contains("missing dataset /heads/step"));
  CHECK(one_line(msg));
}

TEST_CASE("run log: misuse is refused with a message and leaves the log consistent", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("run.h5");
  RunLog log = RunLog::create(path, example_provenance(), false);
  CHECK_THAT(error_of([&] { log.declare_series({"step"}); }), Catch::Contains("reserved"));
  CHECK_THAT(error_of([&] { log.declare_series({"a", "a"}); }), Catch::Contains("duplicate"));
  CHECK_THAT(error_of([&] { log.declare_series({"a/b"}); }), Catch::Contains("invalid"));
  CHECK_THAT(error_of([&] { log.declare_table("t", {}); }), Catch::Contains("at least one column"));
  CHECK_THAT(error_of([&] { log.declare_array("s", {2}, DType::str); }), Catch::Contains("only f64 and i64"));
  CHECK_THAT(error_of([&] { log.append_series(0, {1.0}); }), Catch::Contains("no series declared"));
  log.declare_series({"a", "b"});
  log.declare_series({"b", "a"});  // already declared: no-op, order kept
  CHECK(log.series_names() == std::vector<std::string>{"a", "b"});
  log.declare_table("t", {{"x", DType::f64}, {"name", DType::str, 4}});
  CHECK_THAT(error_of([&] { log.declare_table("t", {{"x", DType::i64}}); }), Catch::Contains("different columns"));
  log.declare_array("arr", {3});
  log.start();
  CHECK_THAT(error_of([&] { log.declare_series({"c"}); }), Catch::Contains(path) && Catch::Contains("after start()"));
  CHECK_THAT(error_of([&] { log.append_series(0, {1.0}); }), Catch::Contains("1 values for 2 series"));
  CHECK_THAT(error_of([&] { log.append_series_named(0, std::map<std::string, double>{{"a", 1.0}}); }),
             Catch::Contains("no value for series 'b'"));
  CHECK_THAT(error_of([&] { log.append_row("t", {Cell(1.0), Cell("toolong")}); }), Catch::Contains("longer than"));
  CHECK_THAT(error_of([&] { log.append_row("t", {Cell("x"), Cell("ab")}); }), Catch::Contains("is f64"));
  CHECK_THAT(error_of([&] { log.append_row("u", {Cell(1.0)}); }), Catch::Contains("not declared"));
  const double v[] = {1, 2};
  CHECK_THAT(error_of([&] { log.write_array("arr", v, 2); }), Catch::Contains("holds 3 values, got 2"));
  log.append_row("t", {Cell(1.0), Cell("abcd")});
  CHECK(log.table_rows("t") == 1);  // the refused rows left nothing behind
  log.close();
  CHECK_THAT(error_of([&] { log.append_series(1, {1.0, 2.0}); }), Catch::Contains("after close()"));
  CHECK(RunLogReader(path).table("t").str("name") == std::vector<std::string>{"abcd"});
}

}  // namespace GAUGELAB_TU
