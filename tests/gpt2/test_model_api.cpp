// The verbs' tier functions (model_api.hpp): import, export, eval (tokens + logits dump, validation
// loss over a token file), generate (greedy, seeded sampling), and their refusals.
#include <cmath>
#include <filesystem>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>

#include "data/token_files.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/use/api.hpp"
#include "io/options.hpp"
#include "io/run_log_reader.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::nano_config;
namespace fs = std::filesystem;
namespace io = gaugelab::io;

namespace {

const std::string kFixture = std::string(GAUGELAB_SOURCE_DIR) + "/tests/fixtures/gpt2";

std::string scratch(const std::string& name) {
  const std::string dir = std::string(GAUGELAB_BINARY_DIR) + "/test_gpt2_scratch/api_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

io::Provenance prov(const char* kind) { return io::Provenance{kind, {"test"}, nlohmann::json::object(), 0, 1}; }

std::string checkpoint_of_fixture(const std::string& dir) {
  ImportOptions o;
  o.source = kFixture;
  o.out = dir + "/ckpt";
  run_import(o);
  return o.out;
}

}  // namespace

TEST_CASE("import -> export through the verb functions keeps the weights and refuses to overwrite", "[gpt2][api]") {
  const std::string dir = scratch("ie");
  const std::string ck = checkpoint_of_fixture(dir);
  CHECK(read_model_dir(ck, c10::Device(c10::kCPU)).checkpoint);
  // import takes a Hugging Face directory alone: our checkpoint is refused as one, by its config.json, and
  // nothing is written.
  ImportOptions again;
  again.source = ck;
  again.out = dir + "/again";
  CHECK_THROWS_WITH(run_import(again), Catch::Contains(ck + "/config.json: missing 'n_layer'"));
  CHECK_FALSE(fs::exists(again.out));
  ExportOptions e;
  e.checkpoint = ck;
  e.out = dir + "/hf";
  run_export(e);
  CHECK(fs::exists(dir + "/hf/model.safetensors"));
  // The fixture's 500 ids are its own tokenizer's: import says so, and export (refusing a small model without
  // a map, as a compact one that lost it) writes it and says so too.
  const ModelDir ours = read_model_dir(ck, c10::Device(c10::kCPU), ModelDirKinds::checkpoint);
  const ModelDir theirs = read_model_dir(dir + "/hf", c10::Device(c10::kCPU), ModelDirKinds::hugging_face);
  CHECK(ours.vocab_size == 500);
  CHECK(ours.vocabulary().own);
  CHECK(theirs.vocab_size == 500);
  CHECK(theirs.vocabulary().own);
  CHECK_THROWS_WITH(run_export(e), Catch::Contains("already exists"));
  e.force = true;
  CHECK_NOTHROW(run_export(e));
  e.dtype = "F64";
  CHECK_THROWS_AS(run_export(e), io::UsageError);
}

TEST_CASE("eval --tokens --dump-logits writes exactly that sequence's logits", "[gpt2][api]") {
  const std::string dir = scratch("dump");
  EvalOptions o;
  o.checkpoint = kFixture;  // a Hugging Face directory works too
  o.tokens = {"464", "68", "7", "86", "3"};
  o.dump_logits = dir + "/logits.h5";
  const EvalResult r = run_eval(o, prov("gpt2/eval"));
  io::RunLogReader log(o.dump_logits);
  const auto logits = log.array("logits");
  REQUIRE(logits.shape == std::vector<std::uint64_t>{5, 500});
  CHECK(log.array_i64("tokens").values == std::vector<std::int64_t>{464, 68, 7, 86, 3});
  CHECK(log.root().kind == "gpt2/eval");

  auto model = read_model_dir(kFixture, c10::Device(c10::kCPU), ModelDirKinds::hugging_face).model;
  at::NoGradGuard no_grad;
  std::vector<std::int64_t> ids = {464, 68, 7, 86, 3};
  const at::Tensor idx = at::from_blob(ids.data(), {1, 5}, at::kLong).clone();
  const at::Tensor want = model->logits(idx).squeeze(0).to(at::kDouble).contiguous();
  const at::Tensor got = at::from_blob(const_cast<double*>(logits.values.data()), {5, 500}, at::kDouble);
  CHECK(got.equal(want));  // float32 logits widened to float64: stored exactly
  CHECK(r.sequence_loss == Approx(model->loss(idx.narrow(1, 0, 4), idx.narrow(1, 1, 4)).item<double>()));
  CHECK(std::isnan(r.val_loss));

  o.tokens = {"464", "500"};
  o.run.force = true;
  CHECK_THROWS_WITH(run_eval(o, prov("gpt2/eval")), Catch::Contains("token id 500 is outside"));
  o.tokens = {"12x"};
  CHECK_THROWS_AS(run_eval(o, prov("gpt2/eval")), io::UsageError);
  EvalOptions none;
  none.checkpoint = kFixture;
  CHECK_THROWS_WITH(run_eval(none, prov("gpt2/eval")), Catch::Contains("--data") && Catch::Contains("--tokens"));
}

TEST_CASE("eval --data averages the loss over fixed batches spread over the file", "[gpt2][api]") {
  const std::string dir = scratch("val");
  std::vector<gaugelab::data::TokenId> toks;
  for (int i = 0; i < 3000; ++i) toks.push_back(static_cast<gaugelab::data::TokenId>((i * 37 + i / 7) % 500));
  gaugelab::data::write_token_file(dir + "/val.bin", toks, gaugelab::data::TokenFileFormat::nanogpt);
  EvalOptions o;
  o.checkpoint = kFixture;
  o.data = dir + "/val.bin";
  o.batch_size = 2;
  o.seq_len = 16;
  o.batches = 3;
  o.run.out = dir + "/eval.h5";
  const EvalResult r = run_eval(o, prov("gpt2/eval"));
  CHECK(r.val_tokens == 3 * 2 * 16);
  // By hand: windows of 17 tokens starting at round(i·(3000−17)/5), i = 0..5.
  auto model = read_model_dir(kFixture, c10::Device(c10::kCPU), ModelDirKinds::hugging_face).model;
  at::NoGradGuard no_grad;
  double sum = 0;
  for (int b = 0; b < 3; ++b) {
    std::vector<std::int64_t> buf;
    for (int row = 0; row < 2; ++row) {
      const std::size_t start = static_cast<std::size_t>((2983.0L * (b * 2 + row)) / 5);
      for (std::size_t t = 0; t < 17; ++t) buf.push_back(toks[start + t]);
    }
    const at::Tensor x = at::from_blob(buf.data(), {2, 17}, at::kLong).clone();
    sum += model->loss(x.narrow(1, 0, 16), x.narrow(1, 1, 16)).item<double>();
  }
  CHECK(r.val_loss == Approx(sum / 3).epsilon(1e-12));
  io::RunLogReader log(o.run.out);
  CHECK(log.series().at("loss").size() == 3);
  CHECK(std::get<double>(log.summary().at("val_loss")) == Approx(r.val_loss));

  o.seq_len = 64;  // the fixture's context is 32
  o.run.force = true;
  CHECK_THROWS_WITH(run_eval(o, prov("gpt2/eval")), Catch::Contains("exceeds the context"));
}

TEST_CASE("generate: greedy is the argmax chain, sampling is reproducible from the seed", "[gpt2][api]") {
  GenerateOptions o;
  o.checkpoint = kFixture;
  o.prompt_tokens = {"5", "6"};
  o.max_new_tokens = 6;
  o.temperature = 0;
  const auto greedy = run_generate(o, prov("gpt2/generate"));
  REQUIRE(greedy.size() == 1);
  REQUIRE(greedy[0].size() == 8);
  auto model = read_model_dir(kFixture, c10::Device(c10::kCPU), ModelDirKinds::hugging_face).model;
  at::NoGradGuard no_grad;
  std::vector<std::int64_t> seq = {5, 6};
  for (int i = 0; i < 6; ++i) {
    std::vector<std::int64_t> copy = seq;
    const at::Tensor idx = at::from_blob(copy.data(), {1, static_cast<std::int64_t>(copy.size())}, at::kLong).clone();
    seq.push_back(model->logits(idx).select(1, idx.size(1) - 1).argmax(-1).item<std::int64_t>());
  }
  CHECK(greedy[0] == seq);

  o.temperature = 1.0;
  o.top_k = 1;  // top-1 sampling is greedy
  CHECK(run_generate(o, prov("gpt2/generate")) == greedy);
  o.top_k = 50;
  o.samples = 2;
  o.run.seed = 9;
  const auto a = run_generate(o, prov("gpt2/generate")), b = run_generate(o, prov("gpt2/generate"));
  CHECK(a == b);
  CHECK(a[0] != a[1]);  // two samples from one stream differ (6 draws among 50 tokens)
  o.run.seed = 10;
  CHECK(run_generate(o, prov("gpt2/generate")) != a);
  o.prompt = "hello";
  CHECK_THROWS_AS(run_generate(o, prov("gpt2/generate")), io::UsageError);  // both prompt forms
}

TEST_CASE("a --compact-vocab checkpoint speaks GPT-2 ids at eval and generate: translated in, translated out", "[gpt2][api]") {
  const std::string dir = scratch("compact");
  auto model = std::make_unique<GPT>(nano_config());
  const std::int64_t K = model->config().vocab_size;
  // model id k stands for GPT-2 id 1000 + 7k (any increasing ids outside [0, K) make a mistranslation visible)
  std::vector<std::int64_t> vocab_ids;
  for (std::int64_t k = 0; k < K; ++k) vocab_ids.push_back(1000 + 7 * k);
  // the key the trainer wrote before gaugelab_vocab_ids (trainer.vocab_ids): still read
  save_checkpoint(dir + "/ckpt", *model, Vocabulary{}, nlohmann::json{{"trainer", {{"vocab_ids", vocab_ids}}}});

  at::NoGradGuard no_grad;
  std::vector<std::int64_t> model_ids = {3, 1, 4, 1, 5};
  const at::Tensor idx = at::from_blob(model_ids.data(), {1, 5}, at::kLong).clone();
  EvalOptions o;
  o.checkpoint = dir + "/ckpt";
  for (const std::int64_t k : model_ids) o.tokens.push_back(std::to_string(vocab_ids[static_cast<std::size_t>(k)]));
  o.dump_logits = dir + "/logits.h5";
  const EvalResult r = run_eval(o, prov("gpt2/eval"));
  CHECK(r.sequence_loss == Approx(model->loss(idx.narrow(1, 0, 4), idx.narrow(1, 1, 4)).item<double>()));
  io::RunLogReader log(o.dump_logits);
  CHECK(log.array_i64("vocab_ids").values == vocab_ids);  // logit column k belongs to GPT-2 id vocab_ids[k]

  o.tokens = {"1000", "1001"};  // 1001 is no model id's GPT-2 id
  o.dump_logits.clear();
  CHECK_THROWS_WITH(run_eval(o, prov("gpt2/eval")), Catch::Contains("1001") && Catch::Contains("compact vocabulary"));

  GenerateOptions g;
  g.checkpoint = dir + "/ckpt";
  g.prompt_tokens = {std::to_string(vocab_ids[5]), std::to_string(vocab_ids[6])};
  g.max_new_tokens = 4;
  g.temperature = 0;
  const auto out = run_generate(g, prov("gpt2/generate"));
  std::vector<std::int64_t> seq = {5, 6};  // the greedy chain in model ids
  for (int i = 0; i < 4; ++i) {
    std::vector<std::int64_t> copy = seq;
    const at::Tensor x = at::from_blob(copy.data(), {1, static_cast<std::int64_t>(copy.size())}, at::kLong).clone();
    seq.push_back(model->logits(x).select(1, x.size(1) - 1).argmax(-1).item<std::int64_t>());
  }
  std::vector<std::int64_t> want;
  for (const std::int64_t k : seq) want.push_back(vocab_ids[static_cast<std::size_t>(k)]);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == want);
}

}  // namespace GAUGELAB_TU
