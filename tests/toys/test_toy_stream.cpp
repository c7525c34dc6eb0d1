// `gaugelab toy relu` streams its first seed's /series while it runs: a long single run killed midway keeps
// the rows it had logged (the log flushes every 2 s), and a finished run's log is the same as before streaming
// (every series row of the first seed, the arrays at their declared sizes, one /tables/runs row per seed).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "io/run_log_reader.hpp"
#include "support/child.hpp"
#include "toys/relu_toy.hpp"

using namespace gaugelab;

namespace {

std::string out_path(const char* name) { return std::string(GAUGELAB_BINARY_DIR) + "/" + name; }

}  // namespace

TEST_CASE("toy relu: a long run killed midway keeps the series rows it had logged", "[toys][relu][stream]") {
  const std::string out = out_path("test_toy_stream_killed.h5");
  std::remove(out.c_str());
  // 1e9 steps: hours; killed (SIGKILL) by the time bound after 6 s, past two 2-s flushes.
  const auto r = test::run_child({std::string(GAUGELAB_BINARY_DIR) + "/gaugelab", "toy", "relu", "--seeds", "1",
                                  "--steps", "1000000000", "--gauges", "0", "--log-every", "1000", "--out", out},
                                 {.limit_s = 6});
  INFO(r.output);
  REQUIRE(r.timed_out);
  const io::RunLogReader reader(out);
  const auto s = reader.series();
  CHECK(s.step.size() >= 2);
  for (std::size_t i = 1; i < s.step.size(); ++i) CHECK(s.step[i] == s.step[i - 1] + 1000);
  CHECK(s.at("loss").size() == s.step.size());
  CHECK(r.output.find("at step") != std::string::npos);  // the progress line (every 5 s)
  std::remove(out.c_str());
}

TEST_CASE("toy relu: a streamed log holds the first seed's whole series and every seed's row", "[toys][relu][stream]") {
  const std::string out = out_path("test_toy_stream_done.h5");
  std::remove(out.c_str());
  const auto r = test::run_child({std::string(GAUGELAB_BINARY_DIR) + "/gaugelab", "toy", "relu", "--seeds", "3",
                                  "--steps", "95", "--log-every", "10", "--gauges", "5", "--save-data", "--out", out},
                                 {.limit_s = 60});
  INFO(r.output);
  REQUIRE(r.status == 0);
  toys::ReluToyOptions o;
  o.steps = 95;
  o.log_every = 10;
  o.gauges = 5;
  o.save_data = true;
  const auto direct = toys::run_relu_seed(o, 0);
  const io::RunLogReader reader(out);
  const auto s = reader.series();
  REQUIRE(s.step == direct.steps);  // 0, 10, ..., 90 and the final 95
  CHECK(s.at("val_mse") == direct.series_of("val_mse"));
  CHECK(reader.table("runs").rows == 3);
  CHECK(reader.array("dinv").values.size() == 5);
  CHECK(reader.array("v_by_step").values.size() == direct.steps.size() * static_cast<std::size_t>(o.hidden));
  std::remove(out.c_str());
}
