// The learning-rate schedule, the instability rule and the data order: plain functions of numbers.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

#include "gpt2/train/data_loader.hpp"
#include "gpt2/train/schedule.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "data/token_files.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {
constexpr double kExact = 1e-15;  // closed forms evaluated in double: a few ulps
}

TEST_CASE("schedule: nanoGPT warm-up then cosine then floor at the paper's settings") {
  const gpt2::LrSchedule s{6e-4, 6e-5, 2000, 20000};
  CHECK(std::abs(s.at(0) - 6e-4 / 2001.0) < kExact);
  CHECK(std::abs(s.at(999) - 6e-4 * 1000.0 / 2001.0) < kExact);
  CHECK(std::abs(s.at(2000) - 6e-4) < kExact);                         // cosine starts at the peak
  CHECK(std::abs(s.at(11000) - (6e-5 + 0.5 * (6e-4 - 6e-5))) < kExact);  // half-way: the mean
  CHECK(std::abs(s.at(20000) - 6e-5) < kExact);
  CHECK(s.at(25000) == 6e-5);
  for (std::int64_t it = 2000; it < 20000; it += 997) CHECK(s.at(it + 1) <= s.at(it));  // monotone decay
}

TEST_CASE("schedule: spike rule needs a full window and ignores warm-up and compares with the running median") {
  gpt2::SpikeDetector d(10.0, 5, 3);
  // Warm-up steps never spike, even when huge.
  CHECK_FALSE(d.observe(1, 1.0));
  CHECK_FALSE(d.observe(2, 100.0));
  CHECK_FALSE(d.observe(3, 1.0));
  CHECK_FALSE(d.observe(4, 1.0));
  CHECK_FALSE(d.observe(5, 1.0));  // window {1,100,1,1,1}: median 1
  CHECK_FALSE(d.observe(6, 9.9));  // below 10 × 1
  CHECK(d.observe(7, 10.5));       // window {100,1,1,1,9.9}: median 1, 10.5 > 10
  CHECK(d.median() == 1.0);        // window now {1,1,1,9.9,10.5}
  CHECK_FALSE(d.observe(8, std::nan("")));  // non-finite norms are not spikes here (divergence is) nor kept
  CHECK(d.window().size() == 5);
  gpt2::SpikeDetector e(10.0, 5, 3);
  e.restore(d.window());
  CHECK(e.observe(9, 11.0) == d.observe(9, 11.0));  // restored state decides alike
}

TEST_CASE("data loader: windows are a pure function of seed and step and micro-step and rank with accumulation equal to ranks") {
  const std::string dir = std::string(GAUGELAB_BINARY_DIR) + "/test_train_loader";
  std::filesystem::create_directories(dir);
  std::vector<data::TokenId> toks(5000);
  for (std::size_t i = 0; i < toks.size(); ++i) toks[i] = static_cast<data::TokenId>((i * 7919) % 1000);
  data::write_token_file(dir + "/t.bin", toks, data::TokenFileFormat::nanogpt);
  const gpt2::TrainBatches one({dir + "/t.bin"}, 42, 3, 16, /*accum*/ 2, 0, 1, 1000);
  const gpt2::TrainBatches again({dir + "/t.bin"}, 42, 3, 16, 2, 0, 1, 1000);
  const gpt2::TrainBatches rank0({dir + "/t.bin"}, 42, 3, 16, 1, 0, 2, 1000), rank1({dir + "/t.bin"}, 42, 3, 16, 1, 1, 2, 1000);
  const gpt2::TrainBatches other_seed({dir + "/t.bin"}, 43, 3, 16, 2, 0, 1, 1000);
  for (std::int64_t step : {0, 5, 123}) {
    CHECK(one.batch(step, 0).equal(again.batch(step, 0)));
    CHECK(one.batch(step, 0).equal(rank0.batch(step, 0)));  // micro 0 of 1 rank = rank 0 of 2 ranks
    CHECK(one.batch(step, 1).equal(rank1.batch(step, 0)));  // micro 1 = rank 1
    CHECK_FALSE(one.batch(step, 0).equal(one.batch(step, 1)));
    CHECK_FALSE(one.batch(step, 0).equal(other_seed.batch(step, 0)));
  }
  std::set<std::uint64_t> starts;
  for (std::uint64_t g = 0; g < 2000; ++g) starts.insert(one.window_start(g));
  CHECK(starts.size() > 1500);  // ~4984 possible starts: windows spread, not stuck
  CHECK(*starts.rbegin() <= 5000 - 16 - 1);
  std::filesystem::remove_all(dir);
}

}  // namespace GAUGELAB_TU
