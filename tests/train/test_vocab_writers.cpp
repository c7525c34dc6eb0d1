// Every writer of a model directory keeps the model's vocabulary, on both kinds (GPT-2's ids, and a --compact-vocab
// model's renumbered ones): the trainer (and its --resume), inspect --write-canonical, export -> import and
// merge-models. Each written model reads back the trainer's id map exactly and gives the checkpoint's validation
// loss on its own data (to float32 round-off). And every reader that pairs a model with data or a tokenizer refuses
// in one line, naming both, a checkpoint whose vocabulary and the data disagree: data with an id the model has no
// row for, a compact model whose map an older writer dropped, a Hugging Face export of a compact model without
// --vocab full. One trained run per kind (one TEST_CASE each); the writers and readers run in this process, the
// trainer and the exit statuses in few child processes.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "data/token_files.hpp"
#include "data/tokenizer.hpp"
#include "gpt2/inspect/api.hpp"
#include "gpt2/landscape/api.hpp"
#include "gpt2/model/json_file.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/vocab_ids.hpp"
#include "gpt2/use/api.hpp"
#include "io/options.hpp"
#include "tests/support/own_dir.hpp"
#include "tests/support/process.hpp"
#include "tests/support/synthetic_corpus.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
using namespace gaugelab::gpt2;
namespace fs = std::filesystem;

namespace {

io::Provenance prov(const char* kind) { return io::Provenance{kind, {"test"}, nlohmann::json::object(), 0, 1}; }

// Runs `args` as a child process; fails the test with its output when the exit status is not 0.
std::string ok(const std::string& args) {
  const test::ProcessResult r = test::run_gaugelab(args);
  INFO("gaugelab " << args << "\n" << r.output);
  REQUIRE(r.status == 0);
  return r.output;
}

// Runs `f`, which must throw; returns its message, checked to be one line holding every one of `names`.
template <typename F>
std::string refusal(F f, const std::vector<std::string>& names) {
  std::string what;
  try {
    f();
  } catch (const std::exception& e) {
    what = e.what();
  }
  INFO("message: " << what);
  CHECK(!what.empty());
  CHECK(what.find('\n') == std::string::npos);
  for (const std::string& n : names) CHECK(what.find(n) != std::string::npos);
  return what;
}

// The fixed-window validation loss of a model directory on `data`.
double loss_of(const std::string& dir, const std::string& data) {
  EvalOptions o;
  o.checkpoint = dir;
  o.data = data;
  o.batches = 4;
  o.batch_size = 2;
  o.run.threads = 1;
  return run_eval(o, prov("gpt2/eval")).val_loss;
}

// Float32 round-off of the loss of a model written through another parametrisation (a gauge, merged multipliers).
bool same_loss(double a, double b) { return std::abs(a - b) <= 2e-5 * std::max(1.0, std::abs(a)); }

std::vector<std::uint16_t> tokens_of(const std::string& path) {
  const data::MappedTokens f = data::MappedTokens::open(path);
  return {f.tokens().begin(), f.tokens().end()};
}

// `path` rewritten as the token file `tokens`.
void write_tokens(const std::string& path, const std::vector<std::uint16_t>& tokens) {
  const std::vector<data::TokenId> ids(tokens.begin(), tokens.end());
  data::write_token_file(path, ids, data::TokenFileFormat::nanogpt);
}

// A copy of checkpoint `from` whose config.json has lost its id map, as inspect --write-canonical wrote it before
// every writer kept the vocabulary.
std::string without_map(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
  nlohmann::json cfg = read_json_file(to + "/config.json");
  REQUIRE(cfg.contains("gaugelab_vocab_ids"));
  cfg.erase("gaugelab_vocab_ids");
  write_json_file(to + "/config.json", cfg);
  return to;
}

// The token rows of our checkpoint `dir` (config.json's model.vocab_size).
std::int64_t rows_of(const std::string& dir) {
  return read_json_file(dir + "/config.json").at("model").at("vocab_size").get<std::int64_t>();
}

// The vocabulary model directory `dir` (`kinds`) records, read as every verb reads it; its model must have `rows`
// token rows, and vocabulary() throws when the map does not fit them.
Vocabulary vocabulary_at(const std::string& dir, std::int64_t rows, ModelDirKinds kinds = ModelDirKinds::checkpoint) {
  const ModelDir d = read_model_dir(dir, c10::Device(c10::kCPU), kinds);
  CHECK(d.vocab_size == rows);
  return d.vocabulary();
}

// inspect at the sizes of a tiny model (context 32), its log to `out`.
InspectOptions small_inspect(const std::string& checkpoint, const std::string& out) {
  InspectOptions in;
  in.checkpoint = checkpoint;
  in.valid_tests = 2;
  in.invalid_tests = 1;
  in.prompts = 2;
  in.prompt_len = 8;
  in.generate = 2;
  in.sample_seqs = 4;
  in.sample_len = 16;
  in.run.out = out;
  in.run.threads = 1;
  return in;
}

struct Run {
  std::string root, data, val, train_flags, ckpt;
};

// A tiny run on the synthetic corpus (3 steps, then resumed to 4 by the test).
Run train_tiny(bool compact) {
  static const test::OwnDir own(std::string(GAUGELAB_BINARY_DIR) + "/test_vocab_writers");
  Run r;
  r.root = own.path + (compact ? "/compact" : "/full");
  fs::remove_all(r.root);
  r.data = test::prepare_synthetic_corpus(r.root + "/data");
  r.val = r.data + "/val.bin";
  r.train_flags = " --data " + r.data + " --model nano --n-layer 2 --n-head 2 --n-embd 32 --block-size 32 " +
                  "--batch-size 2 --eval-every 3 --eval-batches 1 --lr-decay-iters 6 --warmup-iters 1 --threads 1 " +
                  "--peak-tflops 1 --log-every 100 --sample-tokens 0 --multipliers default" +
                  (compact ? " --compact-vocab" : "");
  ok("train" + r.train_flags + " --max-iters 3 --out " + r.root + "/run");
  r.ckpt = r.root + "/run/checkpoints/step_00000003";
  REQUIRE(fs::exists(r.ckpt + "/model.safetensors"));
  return r;
}

// The writers on one trained checkpoint: each written model keeps the trainer's vocabulary and its loss.
void check_writers(const Run& r, bool compact) {
  const std::int64_t rows = rows_of(r.ckpt);
  CHECK((compact ? rows < kGpt2Vocab : rows == kGpt2Vocab));
  const Vocabulary trained = vocabulary_at(r.ckpt, rows);
  if (compact) {
    // The trainer's map: the distinct GPT-2 ids of the run's data, each once.
    std::set<std::int64_t> distinct;
    for (const char* split : {"/train.bin", "/val.bin"})
      for (const std::uint16_t id : tokens_of(r.data + split)) distinct.insert(id);
    const std::set<std::int64_t> mapped(trained.ids.begin(), trained.ids.end());
    CHECK(mapped == distinct);
    REQUIRE(trained.ids.size() == distinct.size());
  } else {
    CHECK(!trained.compact());
  }
  const double loss = loss_of(r.ckpt, r.val);
  REQUIRE(std::isfinite(loss));

  // inspect --write-canonical: the same function in the canonical gauge.
  InspectOptions in = small_inspect(r.ckpt, r.root + "/inspect.h5");
  in.write_canonical = r.root + "/canonical";
  run_inspect(in, prov("gpt2/inspect"));

  // export -> import: the Hugging Face layout and back. A compact model is laid over GPT-2's ids only when asked.
  ExportOptions ex;
  ex.checkpoint = r.ckpt;
  ex.out = r.root + "/hf";
  if (compact) {
    refusal([&] { run_export(ex); }, {r.ckpt, "compact vocabulary of " + std::to_string(rows), "--vocab full"});
    CHECK(!fs::exists(ex.out));
    ex.vocab = "own";  // not for a model with a map either
    refusal([&] { run_export(ex); }, {r.ckpt, "--vocab full"});
    ex.vocab = "full";
  }
  run_export(ex);
  ImportOptions im;
  im.source = ex.out;
  im.out = r.root + "/imported";
  run_import(im);

  // merge-models of the checkpoint with itself, unaligned: t = 0.5 of two equal models is the model.
  MergeOptions me;
  me.model_a = me.model_b = r.ckpt;
  me.align = "none";
  me.run.out = r.root + "/merged";
  me.run.threads = 1;
  run_merge_models(me, prov("gpt2/merge-models"));

  // train --resume: a longer run from the checkpoint writes its next one.
  ok("train --resume" + r.train_flags + " --max-iters 4 --out " + r.root + "/run");
  const std::string resumed = r.root + "/run/checkpoints/step_00000004";

  for (const auto& [writer, dir, same_function] :
       {std::tuple{"inspect --write-canonical", r.root + "/canonical", true}, {"export + import", im.out, true},
        {"merge-models", me.run.out, true}, {"train --resume", resumed, false}}) {
    CAPTURE(writer);
    const Vocabulary v = vocabulary_at(dir, rows);
    CHECK(v.ids == trained.ids);
    CHECK(v.trained.empty());
    const double l = loss_of(dir, r.val);
    CAPTURE(loss, l);
    if (same_function) CHECK(same_loss(l, loss));
    else CHECK(std::isfinite(l));
  }

  // The Hugging Face directory itself: over GPT-2's ids with the trained ones listed; for a compact model the
  // other ids (logit 0) share the softmax, so its loss, transformers' loss, is above the checkpoint's.
  const Vocabulary hf = vocabulary_at(ex.out, kGpt2Vocab, ModelDirKinds::hugging_face);
  CHECK(!hf.compact());
  CHECK(hf.trained == trained.ids);
  const double hf_loss = loss_of(ex.out, r.val);
  CAPTURE(loss, hf_loss);
  if (compact) CHECK(hf_loss > loss + 0.1);
  else CHECK(same_loss(hf_loss, loss));
}

}  // namespace

TEST_CASE("vocabulary writers: a model over GPT-2 ids keeps its loss through every writer", "[train][vocab]") {
  const Run r = train_tiny(false);
  check_writers(r, false);
  // A token the model has no row for (uint16 allows ids past GPT-2's): one line naming the data and the checkpoint.
  std::vector<std::uint16_t> toks = tokens_of(r.val);
  toks[5] = 60000;
  write_tokens(r.root + "/beyond.bin", toks);
  refusal([&] { loss_of(r.ckpt, r.root + "/beyond.bin"); },
          {"data " + r.root + "/beyond.bin", "token id 60000", "checkpoint " + r.ckpt, "50257"});
}

TEST_CASE("vocabulary writers: a --compact-vocab model keeps its id map and loss through every writer, and every "
          "reader refuses data it cannot read in one line",
          "[train][vocab]") {
  const Run r = train_tiny(true);
  check_writers(r, true);
  const Vocabulary v = vocabulary_at(r.ckpt, rows_of(r.ckpt));
  const std::string K = std::to_string(v.ids.size());
  const std::set<std::int64_t> mapped(v.ids.begin(), v.ids.end());
  std::int64_t absent = 0;
  while (mapped.count(absent)) ++absent;  // a GPT-2 id the data never had

  // Data with a token the compact model has no row for: eval, inspect --data and generate name both.
  std::vector<std::uint16_t> toks = tokens_of(r.val);
  toks[7] = static_cast<std::uint16_t>(absent);
  const std::string foreign = r.root + "/foreign.bin";
  write_tokens(foreign, toks);
  const std::vector<std::string> names = {"token id " + std::to_string(absent), "checkpoint " + r.ckpt,
                                          "compact vocabulary of " + K + " trained ids"};
  std::vector<std::string> with_data = names;
  with_data.push_back("data " + foreign + " at position 7");
  refusal([&] { loss_of(r.ckpt, foreign); }, with_data);
  InspectOptions in = small_inspect(r.ckpt, r.root + "/inspect_foreign.h5");
  in.data = foreign;
  refusal([&] { run_inspect(in, prov("gpt2/inspect")); }, with_data);
  GenerateOptions g;
  g.checkpoint = r.ckpt;
  g.prompt_tokens = {std::to_string(absent)};
  g.max_new_tokens = 1;
  g.run.threads = 1;
  refusal([&] { run_generate(g, prov("gpt2/generate")); }, names);

  // A compact checkpoint whose map was dropped (the canonical checkpoint before every writer kept it): its own
  // data, a GPT-2 prompt and the Hugging Face export are refused, naming the missing map.
  const std::string mapless = without_map(r.root + "/canonical", r.root + "/mapless");
  refusal([&] { loss_of(mapless, r.val); }, {"data " + r.val, "checkpoint " + mapless, "no GPT-2 id map"});
  ExportOptions ex;
  ex.checkpoint = mapless;
  ex.out = r.root + "/hf_mapless";
  refusal([&] { run_export(ex); }, {mapless, "no GPT-2 id map", "--vocab own"});
  CHECK(!fs::exists(ex.out));
  if (fs::exists(data::Gpt2Tokenizer::default_ranks_path())) {
    g.checkpoint = mapless;
    g.prompt_tokens.clear();
    g.prompt = "The";
    refusal([&] { run_generate(g, prov("gpt2/generate")); }, {"--prompt", "checkpoint " + mapless, "no GPT-2 id map"});
  }

  // The front door: the same refusals exit non-zero and write nothing.
  for (const auto& [args, says, out] :
       {std::tuple{"export " + r.ckpt + " --out " + r.root + "/hf_cli", std::string("--vocab full"),
                   r.root + "/hf_cli"},
        {"export " + mapless + " --out " + r.root + "/hf_cli", std::string("no GPT-2 id map"), r.root + "/hf_cli"},
        {"train" + r.train_flags + " --max-iters 2 --init-from " + mapless + " --out " + r.root + "/finetune",
         std::string("no GPT-2 id map"), r.root + "/finetune/checkpoints"}}) {
    const test::ProcessResult p = test::run_gaugelab(args);
    INFO("gaugelab " << args << "\n" << p.output);
    CHECK(p.status != 0);
    CHECK(p.output.find(says) != std::string::npos);
    CHECK(!fs::exists(out));
  }
  // train --resume on data whose ids changed since the checkpoint: refused, naming both (the last check: it
  // rewrites the run's data).
  write_tokens(r.val, toks);
  const test::ProcessResult p =
      test::run_gaugelab("train --resume" + r.train_flags + " --max-iters 5 --out " + r.root + "/run");
  INFO(p.output);
  CHECK(p.status != 0);
  CHECK(p.output.find("step_00000004's vocabulary (compact, " + K + " ids) is not the one --data " + r.data) !=
        std::string::npos);
}

}  // namespace GAUGELAB_TU
