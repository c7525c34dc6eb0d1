// `train --profile-from S --profile-steps N` (gpt2/train/step_profiler.hpp): a Chrome trace of those steps in
// OUT/profile.json that scripts/trace_top.py reads, and nothing written without the flag.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/support/process.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {
test::ProcessResult tiny_train(const fs::path& out, const std::string& extra) {
  fs::remove_all(out);
  return test::run_gaugelab("train --data synthetic:200 --model nano --n-embd 32 --block-size 32 --batch-size 2 "
                            "--eval-batches 1 --max-iters 4 --warmup-iters 1 --threads 1 --peak-tflops 1 "
                            "--sample-tokens 0 --log-every 100 --out " + out.string() + " " + extra);
}
}  // namespace

TEST_CASE("train --profile-from: a Chrome trace of the asked steps, and none without the flag") {
  const fs::path dir = fs::path(GAUGELAB_BINARY_DIR) / "test_train_profile";
  const auto r = tiny_train(dir / "on", "--profile-from 2 --profile-steps 2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("profile: steps 2..3 traced to") != std::string::npos);
  std::ifstream in(dir / "on" / "profile.json");
  REQUIRE(in);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::set<std::string> ops;
  for (const auto& e : trace.at("traceEvents"))
    if (e.value("cat", "") == "cpu_op") ops.insert(e.at("name").get<std::string>());
  CHECK(ops.count("aten::mm") + ops.count("aten::addmm") > 0);  // the step's matmuls are in it
  CHECK(ops.count("aten::_fused_adamw_") + ops.count("aten::_foreach_add_") + ops.count("aten::add_") > 0);

  const auto off = tiny_train(dir / "off", "");
  REQUIRE(off.status == 0);
  CHECK_FALSE(fs::exists(dir / "off" / "profile.json"));
}

}  // namespace GAUGELAB_TU
