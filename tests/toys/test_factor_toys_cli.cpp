// The seed-003 and seed-002 toys behind the Toy interface: registered by name, the shared flag names
// (--eta, --eps, --K, --rho-a, --rho-b, --steps, --seeds), bad input refused, and every closed-form
// and simulated figure present in the HDF5 log.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "io/run_log_reader.hpp"
#include "toys/toy.hpp"
#include "toys/toy_runner.hpp"

using namespace gaugelab;

namespace {

struct Case {
  std::string name;
  std::vector<std::string> flags;     // must be declared
  std::vector<std::string> quick;     // small settings so the test runs in well under a second
  std::vector<std::string> metrics;   // must reach /tables/runs
  std::vector<std::string> series;    // must reach /series
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"factor-scalar", {"eta", "eps", "K", "K-min", "K-max", "K-points"}, {"--K-points", "5"},
       {"loss_after_imbalanced_closed", "loss_after_imbalanced_sim", "max_rel_err_m"},
       {"K", "loss_after_closed", "loss_after_sim"}},
      {"factor-matrix", {"eta", "eps", "K", "gauges", "seeds"}, {"--K-points", "3", "--gauges", "2"},
       {"loss_after_plain_closed", "loss_after_plain_sim", "max_err_over_roundoff"},
       {"K", "loss_plain_max", "loss_quotient_max"}},
      {"muon", {"eta", "eps", "K", "rho-a", "rho-b", "K-grid"}, {"--K-grid", "1,1000"},
       {"polar_loss_closed", "polar_loss_sim", "ns5_bf16_loss_sim"}, {"K", "m1_closed", "m1_sim"}},
      {"wd-gram", {"eta", "lambda", "K", "steps", "seeds"}, {"--steps", "20"},
       {"shrink_rel_final", "max_rel_err_shrink"}, {"shrink_abs", "shrink_abs_closed"}},
      {"hyperball", {"eta", "K", "steps", "seeds"}, {"--steps", "20"}, {"max_rel_err_norm", "rel_imbalance_final"},
       {"norm_A", "radius_A"}},
      {"noise-wd", {"eta", "lambda", "steps", "seeds"},
       {"--steps", "50", "--grid-factors", "2", "--window", "0.5", "--burn-in", "0", "--target-grid", "1"},
       {"sgd_eq_norm", "sgd_eq_closed", "scalar_eff_norm_final"}, {"plain_norm", "scalar_eff_norm"}},
  };
  return c;
}

}  // namespace

TEST_CASE("seed-003/002 toys: registered, flags declared, bad values refused", "[toys][cli]") {
  const auto names = toys::toy_names();
  for (const auto& c : cases()) {
    INFO("toy " << c.name);
    REQUIRE(std::find(names.begin(), names.end(), c.name) != names.end());
    auto toy = toys::make_toy(c.name);
    io::Options opts("toy " + c.name, toy->summary());
    toy->declare(opts);
    for (const auto& f : c.flags) CHECK(opts.has(f));
    CHECK(opts.is_numeric("eta"));
    if (opts.has("K")) CHECK(opts.is_numeric("K"));  // `gaugelab sweep NAME --K 1,10,100` needs a plain number
    CHECK_THROWS_AS(opts.parse({"--eta=-1"}), io::UsageError);
    // The same flag with a valid value parses (so the refusal above was about the value).
    auto fresh = toys::make_toy(c.name);
    io::Options good("toy " + c.name, fresh->summary());
    fresh->declare(good);
    CHECK(good.parse({"--eta", "0.002"}));
  }
  auto refused = [](const std::vector<std::string>& args) {
    auto muon = toys::make_toy("muon");
    io::Options opts("toy muon", "");
    muon->declare(opts);
    CHECK_THROWS_AS(opts.parse(args), io::UsageError);
  };
  refused({"--rho-a", "0"});  // ρ ∈ (0, 1]
  refused({"--rho-b", "1.5"});
  refused({"--K", "1e8"});    // beyond the exact polar factor's rank cut
}

TEST_CASE("seed-003/002 toys: closed forms and simulations land in the HDF5 log", "[toys][cli]") {
  const auto dir = std::filesystem::temp_directory_path() / "gaugelab_test_toys_seed003";
  std::filesystem::create_directories(dir);
  for (const auto& c : cases()) {
    INFO("toy " << c.name);
    auto toy = toys::make_toy(c.name);
    io::Options opts("toy " + c.name, toy->summary());
    io::RunFlags flags;
    flags.out = (dir / (c.name + ".h5")).string();
    flags.force = true;
    flags.threads = 1;
    io::add_run_flags(opts, flags, "log");
    toy->declare(opts);
    std::vector<std::string> args;
    args.insert(args.end(), c.quick.begin(), c.quick.end());
    REQUIRE(opts.parse(args));
    io::Provenance prov{"toy/" + c.name, {"gaugelab", "toy", c.name}, opts.to_json(), 0, 1};
    const auto summary = toys::run_toy(*toy, flags, prov);
    CHECK_FALSE(summary.empty());

    io::RunLogReader log(flags.out);
    const auto runs = log.table("runs");
    CHECK(runs.rows == static_cast<std::uint64_t>(toy->seeds()));
    for (const auto& m : c.metrics) CHECK_NOTHROW(runs.f64(m));
    const auto s = log.series();
    for (const auto& n : c.series) {
      CHECK_NOTHROW(s.at(n));
      CHECK(s.at(n).size() == s.step.size());
    }
    CHECK(s.step.size() > 1);
    CHECK_FALSE(log.summary().empty());
  }
  std::filesystem::remove_all(dir);
}
