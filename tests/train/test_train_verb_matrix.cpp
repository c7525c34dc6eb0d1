// Every verb on every kind of checkpoint the trainer writes, as a user runs them (child processes of
// build/gaugelab): full and compact vocabulary × learnable multipliers or none × biases or none, and a
// Hugging Face export of each re-imported. On each: eval (logits of given GPT-2 ids dumped, and a loss
// on a token file), generate (from token ids), export, import of the export, inspect, diag heads
// --checkpoint, train --resume (longer) and train --init-from (the checkpoint, and the Hugging Face
// export). One TEST_CASE per kind so CTest runs them side by side. Sizes are tiny (d 32, context 32, 3 steps) and every process uses one thread.
#include <filesystem>
#include <string>
#include <vector>

#include "data/token_files.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/process.hpp"
#include "tests/gpt2/gpt2_catch.hpp"

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_verb_matrix";

// The synthetic corpus, prepared once per kind (each TEST_CASE may run in its own process).
std::string data_dir(const std::string& name) {
  const std::string d = kRoot + "/" + name + "/data";
  const auto r = test::run_gaugelab("prepare --synthetic --docs 200 --seed 1 --force --out " + d);
  if (r.status != 0) throw std::runtime_error("prepare failed: " + r.output);
  return d;
}

struct Kind {
  std::string name;
  bool compact, lrm, bias;
};

// Runs `args`, failing the test with the command's output when its exit status is not 0.
std::string ok(const std::string& args) {
  const test::ProcessResult r = test::run_gaugelab(args);
  INFO("gaugelab " << args << "\n" << r.output);
  REQUIRE(r.status == 0);
  return r.output;
}

std::int64_t last_step(const std::string& log) {
  const io::RunLogReader in(log);
  const io::SeriesData s = in.series();
  return s.step.empty() ? 0 : s.step.back();
}

// The verbs that take any model directory (ours or a Hugging Face one).
void model_verbs(const std::string& dir, const std::string& data, const std::string& work) {
  // Two GPT-2 ids from the corpus itself, so a compact model has them too.
  const data::MappedTokens val = data::MappedTokens::open(data + "/val.bin");
  const std::string ids = std::to_string(val.tokens()[0]) + "," + std::to_string(val.tokens()[1]);
  ok("eval " + dir + " --tokens " + ids + " --dump-logits " + work + "/logits.h5 --force --threads 1");
  const io::RunLogReader logits(work + "/logits.h5");
  CHECK(logits.array("logits").shape.size() == 2);
  const std::string loss = ok("eval " + dir + " --data " + data + "/val.bin --batches 2 --batch-size 2 --threads 1");
  CHECK(loss.find("nan") == std::string::npos);
  ok("generate " + dir + " --prompt-tokens " + std::to_string(val.tokens()[0]) + " --max-new-tokens 4 --temperature 0 --threads 1");
  ok("inspect " + dir + " --out " + work + "/inspect.h5 --force --valid-tests 2 --invalid-tests 1 --prompts 2 " +
     "--prompt-len 8 --generate 2 --sample-seqs 4 --sample-len 16 --threads 1");
  ok("diag heads --checkpoint " + dir + " --layer 1 --head 1 --quick --out " + work + "/diag.h5 --force --threads 1");
}

void walk(const Kind& k) {
  const std::string dir = kRoot + "/" + k.name, data = data_dir(k.name), run = dir + "/run";
  fs::remove_all(run);
  const std::string train = " --data " + data + " --model nano --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 " +
                            "--batch-size 2 --eval-every 3 --eval-batches 1 --lr-decay-iters 6 --warmup-iters 1 " +
                            "--threads 1 --peak-tflops 1 --log-every 100 --multipliers " +
                            (k.lrm ? "default" : "none") + (k.compact ? " --compact-vocab" : "") +
                            (k.bias ? " --bias" : "");
  ok("train" + train + " --max-iters 3 --out " + run);
  const std::string ckpt = run + "/checkpoints/step_00000003";
  REQUIRE(fs::exists(ckpt + "/model.safetensors"));

  model_verbs(ckpt, data, dir);

  // Export to Hugging Face, import back, and run the model verbs on both.
  ok("export " + ckpt + " --out " + dir + "/hf --force");
  model_verbs(dir + "/hf", data, dir);
  ok("import " + dir + "/hf --out " + dir + "/imported --force --multipliers " + (k.lrm ? "default" : "none"));
  model_verbs(dir + "/imported", data, dir);

  // Resume to more steps (the cosine is pinned by --lr-decay-iters, so a longer run is the same plan).
  ok("train --resume" + train + " --max-iters 5 --out " + run);
  CHECK(last_step(run + "/log.h5") == 5);

  // A new run from the trained weights (nanoGPT's init_from).
  fs::remove_all(dir + "/finetune");
  ok("train" + train + " --max-iters 2 --init-from " + ckpt + " --out " + dir + "/finetune");
  CHECK(last_step(dir + "/finetune/log.h5") == 2);
  // ... and from the Hugging Face export (fine-tuning an import; multipliers placed at 1).
  fs::remove_all(dir + "/finetune_hf");
  ok("train" + train + " --max-iters 2 --init-from " + dir + "/hf --out " + dir + "/finetune_hf");
  CHECK(last_step(dir + "/finetune_hf/log.h5") == 2);
}

}  // namespace

TEST_CASE("verb matrix: full vocabulary, multipliers, no biases (the 124M path)", "[train][verbs]") {
  walk({"full_lrm_nobias", false, true, false});
}
TEST_CASE("verb matrix: full vocabulary, multipliers, biases", "[train][verbs]") {
  walk({"full_lrm_bias", false, true, true});
}
TEST_CASE("verb matrix: full vocabulary, no multipliers, no biases", "[train][verbs]") {
  walk({"full_plain_nobias", false, false, false});
}
TEST_CASE("verb matrix: full vocabulary, no multipliers, biases", "[train][verbs]") {
  walk({"full_plain_bias", false, false, true});
}
TEST_CASE("verb matrix: compact vocabulary, multipliers, no biases", "[train][verbs]") {
  walk({"compact_lrm_nobias", true, true, false});
}
TEST_CASE("verb matrix: compact vocabulary, multipliers, biases", "[train][verbs]") {
  walk({"compact_lrm_bias", true, true, true});
}
TEST_CASE("verb matrix: compact vocabulary, no multipliers, no biases", "[train][verbs]") {
  walk({"compact_plain_nobias", true, false, false});
}
TEST_CASE("verb matrix: compact vocabulary, no multipliers, biases", "[train][verbs]") {
  walk({"compact_plain_bias", true, false, true});
}
