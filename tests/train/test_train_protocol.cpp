// The protocol switches of `gaugelab train` as a user meets them: the schedule pinned on resume
// (--replan), training on llm.c shard lists, --init-from refusing a mismatched size, and the three
// gradient norms in the log. Child processes of build/gaugelab, tiny sizes, one thread.
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "data/token_files.hpp"
#include "gpt2/train/data_loader.hpp"
#include "gpt2/train/loop_state.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/own_dir.hpp"
#include "tests/support/process.hpp"
#include "tests/support/synthetic_corpus.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_protocol";

std::string synthetic_data() {
  static const test::OwnDir own(kRoot + "/data");
  static const std::string dir = test::prepare_synthetic_corpus(own.path);
  return dir;
}

std::string tiny(const std::string& data, const std::string& out) {
  return " --data " + data + " --out " + out +
         " --model nano --n-layer 1 --n-head 2 --n-embd 32 --block-size 16 --compact-vocab --batch-size 2 " +
         "--eval-batches 1 --warmup-iters 1 --threads 1 --peak-tflops 1 --log-every 100";
}

}  // namespace

TEST_CASE("protocol: a --max-iters that moves the cosine on --resume is refused, --replan re-plans it") {
  const std::string out = kRoot + "/replan";
  fs::remove_all(out);
  const std::string args = tiny(synthetic_data(), out);
  REQUIRE(test::run_gaugelab("train" + args + " --max-iters 3").status == 0);
  const test::ProcessResult refused = test::run_gaugelab("train --resume" + args + " --max-iters 5");
  INFO(refused.output);
  CHECK(refused.status == 2);
  CHECK(refused.output.find("--replan") != std::string::npos);
  const test::ProcessResult replanned = test::run_gaugelab("train --resume --replan" + args + " --max-iters 5");
  INFO(replanned.output);
  REQUIRE(replanned.status == 0);
  CHECK(replanned.output.find("the cosine now reaches min-lr at step 5 (was 3)") != std::string::npos);
  const io::SeriesData s = io::RunLogReader(out + "/log.h5").series();
  REQUIRE(s.step.size() == 5);
  // Step 4's lr (0-based it 3) follows the re-planned cosine: min-lr + ½(1 + cos(π·2/4))·(lr − min-lr).
  const double lr = 6e-4, min_lr = 6e-5;
  CHECK(std::abs(s.at("lr")[3] - (min_lr + 0.5 * (1 + std::cos(M_PI * 2.0 / 4.0)) * (lr - min_lr))) < 1e-12);
}

TEST_CASE("protocol: the log holds the total, clipped-set and multiplier gradient norms") {
  const std::string out = kRoot + "/norms";
  fs::remove_all(out);
  REQUIRE(test::run_gaugelab("train" + tiny(synthetic_data(), out) + " --max-iters 3").status == 0);
  const io::SeriesData s = io::RunLogReader(out + "/log.h5").series();
  for (std::size_t i = 0; i < s.step.size(); ++i) {
    const double t = s.at("grad_norm")[i], c = s.at("grad_norm_clipped")[i], m = s.at("grad_norm_multipliers")[i];
    CHECK(m > 0);  // the default placement has multipliers
    CHECK(std::abs(t * t - (c * c + m * m)) <= 1e-5 * t * t);  // the two sets split every parameter
  }
  // The last step is a sample step: update-to-weight ratios of every group the model has, NaN before.
  for (const char* g : {"update_ratio_matrices", "update_ratio_multipliers_qk", "update_ratio_embeddings"}) {
    INFO(g);
    CHECK(std::isnan(s.at(g)[0]));
    CHECK(s.at(g)[2] > 0);
    CHECK(s.at(g)[2] < 1);
  }
  CHECK(std::isnan(s.at("update_ratio_biases_norms")[2]) == false);  // LayerNorm gains are there
}

TEST_CASE("protocol: --init-from refuses a size flag that disagrees with the checkpoint") {
  const std::string out = kRoot + "/init";
  fs::remove_all(out);
  const std::string data = synthetic_data();
  REQUIRE(test::run_gaugelab("train" + tiny(data, out) + " --max-iters 1").status == 0);
  const test::ProcessResult r = test::run_gaugelab(
      "train --data " + data + " --out " + kRoot + "/init2 --n-embd 64 --compact-vocab --threads 1 --max-iters 1 --warmup-iters 1 " +
      "--force --init-from " + out + "/checkpoints/step_00000001");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("--init-from") != std::string::npos);
}

TEST_CASE("protocol: training on llm.c shard lists, windows never cross a shard") {
  const std::string d = kRoot + "/shards";
  fs::remove_all(d);
  fs::create_directories(d);
  std::vector<data::TokenId> a(300), b(500), v(200);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 1000);
  std::iota(v.begin(), v.end(), 2000);
  data::write_token_file(d + "/toy_train_000001.bin", b, data::TokenFileFormat::llmc);  // name order, not write order
  data::write_token_file(d + "/toy_train_000000.bin", a, data::TokenFileFormat::llmc);
  data::write_token_file(d + "/toy_val_000000.bin", v, data::TokenFileFormat::llmc);
  const std::vector<std::string> files = gpt2::split_files(d, "train");
  REQUIRE(files.size() == 2);
  CHECK(files[0].find("000000") != std::string::npos);

  const std::int64_t T = 16;
  const gpt2::TokenShards shards(files, T + 1);
  CHECK(shards.starts() == (300 - T) + (500 - T));
  const gpt2::TrainBatches batches(files, 7, 4, T, 1, 0, 1, 4096);
  for (std::int64_t step = 0; step < 50; ++step) {
    const at::Tensor x = batches.batch(step, 0);  // [4, T+1]
    for (std::int64_t row = 0; row < 4; ++row) {
      // Consecutive ids inside a shard: a window that crossed from one shard to the next would jump.
      const auto* p = x[row].data_ptr<std::int64_t>();
      for (std::int64_t t = 1; t <= T; ++t) REQUIRE(p[t] == p[t - 1] + 1);
    }
  }
  const std::string out = kRoot + "/shard_run";
  fs::remove_all(out);
  const test::ProcessResult r = test::run_gaugelab(
      "train --data " + d + " --out " + out + " --model nano --n-layer 1 --n-head 2 --n-embd 32 --block-size 16 " +
      "--compact-vocab --batch-size 2 --eval-batches 1 --warmup-iters 1 --threads 1 --peak-tflops 1 --max-iters 2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("2 train file(s)") != std::string::npos);
}

TEST_CASE("protocol: MFU counts each rank's device once (the same work on 2 ranks is not twice the utilisation)") {
  // 1e9 FLOPs/token at 1e4 tokens/s is 1e13 FLOP/s: 10 % of one 100-TFLOP/s device, 5 % of two.
  CHECK(gpt2::model_flops_utilization(1e9, 1e4, 100, 1) == Approx(0.10).epsilon(1e-12));
  CHECK(gpt2::model_flops_utilization(1e9, 1e4, 100, 2) == Approx(0.05).epsilon(1e-12));
}

TEST_CASE("protocol: the slowdown watch warns once when steps become 4x slower than their best, never when steady") {
  gpt2::SlowdownWatch steady, slowed;
  int warned_steady = 0, warned_slowed = 0;
  for (int i = 0; i < 200; ++i) warned_steady += steady.observe(0.1 * (1 + 0.2 * (i % 3)));  // jitter, no trend
  for (int i = 0; i < 30; ++i) warned_slowed += slowed.observe(0.1);
  CHECK(warned_slowed == 0);
  for (int i = 0; i < 100; ++i) warned_slowed += slowed.observe(1.4);  // the machine got busy: 14x
  CHECK(warned_steady == 0);
  CHECK(warned_slowed == 1);
  CHECK(slowed.ratio() > 4);
}

}  // namespace GAUGELAB_TU
