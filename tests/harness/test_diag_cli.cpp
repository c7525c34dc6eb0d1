// `gaugelab diag heads` at the front door: usage errors (exit 2, one line), --checkpoint in a build
// without a checkpoint reader (exit 1, one line, no file), and a --quick run writing /tables/spread.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include "io/run_log_reader.hpp"
#include "support/process.hpp"
#include "tests/io/temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

namespace {

using Result = gaugelab::test::ProcessResult;

Result run(const std::string& args) { return gaugelab::test::run_gaugelab(args); }

std::size_t lines(const std::string& s) { return gaugelab::test::count_lines(s); }

// Small shapes so the front-door run takes well under a second; --quick sets the grid.
const std::string kSmall = " --d-model 32 --d-head 4 --tokens 8";

}  // namespace

TEST_CASE("diag cli: usage errors exit 2 with one line naming the problem", "[harness][cli]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"diag", "subcommand"},
      {"diag tails", "tails"},
      {"diag heads --bogus 1", "--bogus"},
      {"diag heads --rules sgd,adam", "adam"},
      {"diag heads --wrappers none,magic", "magic"},
      {"diag heads --kappa 0.5", "kappa"},
      {"diag heads --families round", "round"},
      {"diag heads --gauges 0", "gauges"},
      {"diag heads --solve lu", "solve"},
      {"diag heads --step-size 2", "step-size"},
  };
  for (const auto& [args, needle] : cases) {
    INFO(args);
    const auto r = run(args);
    CHECK(r.status == 2);
    CHECK(lines(r.output) == 1);
    CHECK(r.output.find(needle) != std::string::npos);
  }
  CHECK(run("diag --help").status == 0);
  CHECK(run("diag heads --help").output.find("--checkpoint") != std::string::npos);
}

TEST_CASE("diag cli: --checkpoint without a checkpoint reader fails cleanly", "[harness][cli]") {
  gaugelab::test::TempDir dir;
  const std::string out = dir.file("ck.h5");
  const auto r = run("diag heads --checkpoint " + dir.path.string() + " --layer 3 --head 1 --out " + out);
  if (r.status == 0 || r.output.find("cannot read checkpoints") == std::string::npos) {
    // A build whose front door hands down the GPT-2 tier's loader reads checkpoints: then an empty
    // directory is a bad checkpoint, still a one-line runtime error.
    CHECK(r.status == 1);
    CHECK(lines(r.output) <= 2);
    return;
  }
  CHECK(r.status == 1);
  CHECK(r.output.rfind("gaugelab diag: error:", 0) == 0);  // the whole output is the one error line
  CHECK(lines(r.output) == 1);
  CHECK_FALSE(std::filesystem::exists(out));  // failed before any file was written
}

TEST_CASE("diag cli: --quick writes the spread table and refuses to overwrite it", "[harness][cli]") {
  gaugelab::test::TempDir dir;
  const std::string out = dir.file("quick.h5");
  auto r = run("diag heads --quick --threads 2 --out " + out + kSmall);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("first-order spread") != std::string::npos);
  const gaugelab::io::RunLogReader log(out);
  CHECK(log.root().kind == "diag/heads");
  CHECK(log.root().config()["quick"] == true);
  CHECK(log.root().config()["gauges"] == 4);  // --quick shrank the grid
  const auto t = log.table("spread");
  // 6 rules (adamw-warm once per transport: 8 variants) x 5 wrappers x
  // (diagonal, general at 4 kappa + orthogonal once) = 40 x 9 rows.
  CHECK(t.rows == 360);
  for (const char* c : {"rule", "wrapper", "family", "transport"}) CHECK(t.str(c).size() == t.rows);
  for (const char* c : {"kappa", "first_order_spread_median", "first_order_spread_max", "exact_spread_median",
                        "exact_spread_max", "loss_spread_median", "loss_spread_max", "forward_error_max"})
    CHECK(t.f64(c).size() == t.rows);
  const auto& fam = t.str("family");
  const auto& wrap = t.str("wrapper");
  const auto& rule = t.str("rule");
  const auto& first = t.f64("first_order_spread_max");
  for (std::size_t i = 0; i < t.rows; ++i)
    if (fam[i] == "orthogonal" && wrap[i] == "none" && rule[i] == "sgd") CHECK(first[i] < 1e-12);
  CHECK(log.summary().count("sgd_full_first_order_max_kappa_le_100") == 1);

  r = run("diag heads --quick --out " + out + kSmall);
  CHECK(r.status == 2);  // a usage error: the flag names a file that is there
  CHECK(r.output.find("already exists") != std::string::npos);
}

}  // namespace GAUGELAB_TU
