// Writes the example log the Python reader's tests read (analysis/tests/test_gaugelab_log.py):
// ${GAUGELAB_BINARY_DIR}/fixtures/example_log.h5. The values here and there must agree.
#include <catch2/catch.hpp>

#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::io;

TEST_CASE("run log: writes the example log for the Python reader", "[io][run_log][fixture]") {
  const std::string path = std::string(GAUGELAB_BINARY_DIR) + "/fixtures/example_log.h5";
  {
    Provenance p;
    p.kind = "toy/example";
    p.argv = {"gaugelab", "toy", "example", "--lr", "0.1"};
    p.config = {{"lr", 0.1}, {"steps", 20}};
    p.seed = 7;
    p.threads = 1;
    RunLog log = RunLog::create(path, p, /*force=*/true);
    log.declare_series({"loss", "lr"});
    log.declare_heads({"s_q"}, 2, 3);
    log.declare_table("runs", {{"lr", DType::f64}, {"seed", DType::i64}, {"status", DType::str, 16}});
    log.declare_array("spectrum", {3, 4});
    log.start();
    for (std::int64_t i = 0; i < 20; ++i) log.append_series(i, {1.0 / static_cast<double>(1 + i), 0.1});
    for (int r = 0; r < 5; ++r) {
      gaugelab::core::Mat<double> q(2, 3);  // [layers, heads]
      for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h) q(l, h) = r + 0.1 * l + 0.01 * h;
      log.append_heads(r, {q});
    }
    log.append_row("runs", {Cell(0.1), Cell(std::int64_t{0}), Cell("stable")});
    log.append_row("runs", {Cell(1.0), Cell(std::int64_t{1}), Cell("diverged")});
    std::vector<double> spectrum(12);
    for (int i = 0; i < 12; ++i) spectrum[static_cast<std::size_t>(i)] = i;
    log.write_array("spectrum", spectrum.data(), spectrum.size());
    log.set_summary("final_loss", 0.05);
    log.set_summary("n_runs", std::int64_t{2});
    log.set_summary("verdict", std::string("ok"));
  }
  RunLogReader r(path);
  CHECK(r.series_length() == 20);
  CHECK(r.table("runs").rows == 2);
  CHECK(r.summary().size() == 3);
}

}  // namespace GAUGELAB_TU
