// Every verb on every kind of checkpoint the trainer writes, as a user runs them (child processes of
// build/gaugelab): full and compact vocabulary, learnable multipliers or none, biases or none (in the pairwise
// design at the end), and a Hugging Face export of each re-imported. On each: eval (logits of given GPT-2 ids
// dumped, and a loss on a token file), generate (from token ids), export, import of the export, inspect, diag
// heads --checkpoint, train --resume (longer) and train --init-from (the checkpoint, and the Hugging Face
// export). One TEST_CASE per kind, each [alone] (a CTest test of its own), so CTest runs them side by side. Sizes are tiny (d 32, context 32, 3 steps)
// and every process uses one thread.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "data/token_files.hpp"
#include "data/tokenizer.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/process.hpp"
#include "tests/support/synthetic_corpus.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_verb_matrix";

// The synthetic corpus, prepared once per kind (each TEST_CASE may run in its own process).
std::string data_dir(const std::string& name) {
  const std::string d = kRoot + "/" + name + "/data";
  return test::prepare_synthetic_corpus(d);
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
  if (k.name == "full_lrm_nobias") {
    // --data DIR means DIR/val.bin; a file that is not a token file is refused in one line.
    const std::string loss = ok("eval " + ckpt + " --data " + data + " --batches 1 --batch-size 2 --threads 1");
    CHECK(loss.find("nan") == std::string::npos);
    const test::ProcessResult bad = test::run_gaugelab("eval " + ckpt + " --data " + data + "/meta.json --threads 1");
    CHECK(bad.status != 0);
    CHECK(bad.output.find("is not a token file") != std::string::npos);
  }

  // Export to Hugging Face, import back, and run the model verbs on both.
  ok("export " + ckpt + " --out " + dir + "/hf --force" + (k.compact ? " --vocab full" : ""));
  model_verbs(dir + "/hf", data, dir);
  if (k.compact) {
    // --vocab full lays a compact model over GPT-2's ids: 50257 rows, the trained ones at their ids with their
    // logits unchanged, so a Hugging Face user feeds GPT-2 ids (the writers' test checks the rest).
    const data::MappedTokens val = data::MappedTokens::open(data + "/val.bin");
    const std::string ids = std::to_string(val.tokens()[0]) + "," + std::to_string(val.tokens()[1]);
    ok("eval " + ckpt + " --tokens " + ids + " --dump-logits " + dir + "/logits_ckpt.h5 --force --threads 1");
    ok("eval " + dir + "/hf --tokens " + ids + " --dump-logits " + dir + "/logits_hf.h5 --force --threads 1");
    const io::RunLogReader a(dir + "/logits_ckpt.h5"), b(dir + "/logits_hf.h5");
    const io::ArrayData<double> la = a.array("logits"), lb = b.array("logits"), vid = a.array("vocab_ids");
    REQUIRE(la.shape.size() == 2);
    REQUIRE(lb.shape.size() == 2);
    CHECK(lb.shape[1] == 50257);
    REQUIRE(vid.values.size() == la.shape[1]);
    double worst = 0, scale = 0;
    for (std::uint64_t t = 0; t < la.shape[0]; ++t)
      for (std::uint64_t j = 0; j < la.shape[1]; ++j) {
        const double x = la.values[t * la.shape[1] + j];
        const double y = lb.values[t * lb.shape[1] + static_cast<std::uint64_t>(vid.values[j])];
        worst = std::max(worst, std::abs(x - y));
        scale = std::max(scale, std::abs(x));
      }
    CHECK(worst <= 1e-5 * std::max(1.0, scale));  // multipliers merged in float32: a few roundings
#ifdef GAUGELAB_TORCH_PYTHON
    // transformers reads the export and takes GPT-2's "The" (464), which the compact rows alone could not.
    const test::ProcessResult hf = test::run_command(
        std::string(GAUGELAB_TORCH_PYTHON) + " -W ignore -c \"import torch, transformers; m = "
        "transformers.GPT2LMHeadModel.from_pretrained('" + dir + "/hf'); print('shape', tuple(m(torch.tensor([[464]]))"
        ".logits.shape))\"");
    INFO(hf.output);
    CHECK(hf.status == 0);
    CHECK(hf.output.find("shape (1, 1, 50257)") != std::string::npos);
#endif
    // generate on the export takes text (GPT-2's tokenizer covers its ids), when the ranks file is installed.
    if (fs::exists(data::Gpt2Tokenizer::default_ranks_path())) {
      const std::string text = ok("generate " + dir + "/hf --prompt The --max-new-tokens 2 --temperature 0 --threads 1");
      CHECK(text.find("The") != std::string::npos);
    }
  }
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

// The kinds: the three factors (vocabulary, multipliers, biases) in a pairwise design, an orthogonal array of 4
// runs in which every pair of factors takes all four combinations of its levels (PyTorch's optimizer × options
// tables do the same). A fault needing two factors together is caught; one needing all three at once is not, and
// that is the trade for half of the suite's 8 full walks (~120 CPU-s of `make test` on 2 cores).
TEST_CASE("verb matrix: full vocabulary, multipliers, no biases (the 124M path)", "[train][verbs][alone]") {
  walk({"full_lrm_nobias", false, true, false});
}
TEST_CASE("verb matrix: full vocabulary, no multipliers, biases", "[train][verbs][alone]") {
  walk({"full_plain_bias", false, false, true});
}
TEST_CASE("verb matrix: compact vocabulary, multipliers, biases", "[train][verbs][alone]") {
  walk({"compact_lrm_bias", true, true, true});
}
TEST_CASE("verb matrix: compact vocabulary, no multipliers, no biases", "[train][verbs][alone]") {
  walk({"compact_plain_nobias", true, false, false});
}

}  // namespace GAUGELAB_TU
