// Every row of the conditions table (gpt2/train/conditions.cpp) trains from the command line and logs what
// the analysis reads: its key, label, title and reference, a stop reason, the effective Q/K imbalance per
// head. A row added to the table is covered here without a new test; the rows with a property of their
// own (Beff: the effective norms balanced after every fix; the plain-ops attention path: the same losses
// as the fused kernel) are checked on top.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "gpt2/train/conditions.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/run_log_reader.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "tests/support/process.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_condition_rows";

// One corpus per TEST_CASE (ctest runs them in parallel; a shared one would be rewritten under a reader).
std::string data_dir(const std::string& test_case) {
  const std::string dir = kRoot + "/" + test_case + "/data";
  if (!std::filesystem::exists(dir + "/meta.json")) {
    const auto prep = test::run_command(kBin + " prepare --synthetic --docs 200 --seed 3 --force --out " + dir);
    REQUIRE(prep.status == 0);
  }
  return dir;
}

io::RunLogReader train(const std::string& test_case, const std::string& name, const std::string& flags) {
  const std::string out = kRoot + "/" + test_case + "/" + name;
  const auto r = test::run_command(kBin + " train --data " + data_dir(test_case) + " --out " + out +
                                   " --model nano --n-embd 32 --block-size 16 --compact-vocab --batch-size 2 "
                                   "--eval-batches 1 --eval-every 3 --log-heads-every 1 --threads 1 --peak-tflops 1 "
                                   "--log-every 1000 --max-iters 3 --warmup-iters 0 --force " + flags);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return io::RunLogReader(gpt2::train_log_path(out));
}

using Summary = std::map<std::string, io::Cell>;

std::string text(const Summary& s, const char* key) { return std::get<std::string>(s.at(key)); }

}  // namespace

TEST_CASE("condition rows: every row trains and logs its key, label, reference, stop reason and imbalance", "[alone]") {
  for (const gpt2::Condition& c : gpt2::conditions()) {
    INFO(c.key);
    const io::RunLogReader log = train("rows", c.key, std::string("--condition ") + c.key);
    const Summary s = log.summary();
    CHECK(text(s, "condition") == c.key);
    CHECK(text(s, "condition_label") == c.key);
    CHECK(text(s, "condition_title") == c.title);
    CHECK(text(s, "condition_reference") == (*c.compared_with ? std::string(c.compared_with) : std::string("-")));
    CHECK(text(s, "stop_reason") == "completed");
    CHECK(std::isfinite(std::get<double>(s.at("final_eff_imbalance_max"))));
    const io::HeadsData rho = log.heads("qk_eff_log_ratio");
    REQUIRE(rho.values.size() == rho.records * rho.layers * rho.heads);
    CHECK(rho.records >= 3);  // one sample per step with --log-heads-every 1
    for (const double v : rho.values) CHECK(std::isfinite(v));
  }
}

TEST_CASE("condition rows: Beff leaves every head's effective Q and K maps at equal norms") {
  const io::RunLogReader beff = train("beff", "beff", "--condition Beff");
  const io::HeadsData rho = beff.heads("qk_eff_log_ratio");
  for (const double v : rho.values) CHECK(std::abs(v) < 1e-4);  // sampled after each step's fix
  const io::RunLogReader b = train("beff", "b", "--condition B");        // seed 000's fix balances the multipliers only
  CHECK(std::get<double>(b.summary().at("final_eff_imbalance_max")) > 1e-3);
}

TEST_CASE("condition rows: the plain-ops attention path trains to the fused kernel's losses") {
  const io::SeriesData fused = train("attention", "sdpa", "--condition C --attention sdpa").series();
  const io::SeriesData plain = train("attention", "math", "--condition C --attention math").series();
  REQUIRE(fused.at("loss").size() == plain.at("loss").size());
  for (std::size_t i = 0; i < fused.at("loss").size(); ++i)
    CHECK(plain.at("loss")[i] == Approx(fused.at("loss")[i]).epsilon(1e-5));
}

}  // namespace GAUGELAB_TU
