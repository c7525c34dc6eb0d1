// Text samples during training (gpt2/train/evaluate.hpp): the line format with compact ids mapped to GPT-2
// ids, the greedy continuation's length and determinism, and the file kept consistent with a resume.
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gpt2/train/evaluate.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/support/process.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

TEST_CASE("samples: a line maps compact ids to GPT-2 ids and shows the prompt and continuation apart") {
  const std::vector<std::int32_t> vocab_ids = {464, 3290, 13};  // model id k -> GPT-2 id
  CHECK(gpt2::sample_line(250, {0, 1}, {2}, vocab_ids, nullptr) == "step 250: [464 3290]|[13]");
  CHECK(gpt2::sample_line(5, {7}, {8, 9}, {}, nullptr) == "step 5: [7]|[8 9]");
}

TEST_CASE("samples: the greedy continuation has the asked length, repeats exactly, and leaves the mode alone") {
  gpt2::GPT m(test::nano_config(), 3);
  m.train(true);
  const std::vector<std::int64_t> prompt = {1, 2, 3};
  const auto a = gpt2::greedy_continue(m, prompt, 40);  // longer than the nano context: the window slides
  CHECK(a.size() == 40);
  CHECK(gpt2::greedy_continue(m, prompt, 40) == a);
  CHECK(m.training());
}

TEST_CASE("samples: a resume keeps the lines up to its step, a fresh run empties the file") {
  const fs::path dir = fs::path(GAUGELAB_BINARY_DIR) / "test_train_samples";
  fs::create_directories(dir);
  const std::string path = (dir / "samples.txt").string();
  std::ofstream(path) << "step 5: a|b\nstep 10: c|d\nstep 15: e|f\n";
  gpt2::keep_samples_up_to(path, 10);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "step 5: a|b\nstep 10: c|d\n");
  gpt2::keep_samples_up_to(path, 0);
  CHECK(fs::file_size(path) == 0);
  gpt2::keep_samples_up_to((dir / "none.txt").string(), 0);
  CHECK_FALSE(fs::exists(dir / "none.txt"));
}

TEST_CASE("samples: train writes one line per evaluation to OUT/samples.txt") {
  const fs::path out = fs::path(GAUGELAB_BINARY_DIR) / "test_train_samples" / "run";
  fs::remove_all(out);
  const auto r = test::run_gaugelab("train --data synthetic:200 --model nano --n-embd 32 --block-size 32 --batch-size 2 "
                                    "--eval-batches 1 --eval-every 5 --max-iters 10 --warmup-iters 1 --threads 1 "
                                    "--peak-tflops 1 --sample-tokens 6 --log-every 5 --out " + out.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(out / "samples.txt");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("step 5: ", 0) == 0);
  CHECK(lines[1].rfind("step 10: ", 0) == 0);
  CHECK(lines[1].find('|') != std::string::npos);
  CHECK(r.output.find("sample step 10: ") != std::string::npos);
  // The progress line's drift keeps its digits (a rounding-level drift printed as 0.000000 before).
  CHECK(std::regex_search(r.output, std::regex("drift [0-9]\\.[0-9]{2}e[-+][0-9]+ ")));
  CHECK(r.output.find("drift 0.000000") == std::string::npos);
}

}  // namespace GAUGELAB_TU
