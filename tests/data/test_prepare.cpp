// `prepare` end to end: outputs, determinism across thread counts, the split, shards, overwrite
// protection and error cleanup.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <cmath>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "data/prepare.hpp"
#include "data/token_files.hpp"
#include "io/options.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::TempDir;
using gaugelab::data::testing::tokenizer_or_skip;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

PrepareOptions synthetic_options(const std::string& out_dir, std::size_t n_docs) {
  PrepareOptions o;
  o.synthetic = true;
  o.synthetic_options.n_docs = n_docs;
  o.out_dir = out_dir;
  o.ranks_path = gaugelab::data::testing::ranks_path();
  o.progress = false;
  return o;
}

std::vector<std::uint16_t> concat_shards(const std::vector<std::string>& files) {
  std::vector<std::uint16_t> all;
  for (const auto& f : files) {
    if (f.ends_with("train.bin") || f.ends_with("val.bin")) continue;
    const MappedTokens m = MappedTokens::open(f, TokenFileFormat::llmc);
    all.insert(all.end(), m.tokens().begin(), m.tokens().end());
  }
  return all;
}

}  // namespace

TEST_CASE("the split rule puts exactly floor(n f + phi) documents in validation, spread evenly", "[prepare]") {
  for (const double f : {0.01, 0.1, 0.37}) {
    for (const std::uint64_t seed : {0ull, 1337ull}) {
      std::uint64_t n_val = 0, last = 0, max_gap = 0;
      const std::uint64_t n = 5000;
      for (std::uint64_t i = 0; i < n; ++i)
        if (is_validation_document(i, f, seed)) max_gap = std::max(max_gap, i - last), last = i, ++n_val;
      CHECK(std::abs(static_cast<double>(n_val) - n * f) <= 1.0);
      CHECK(static_cast<double>(max_gap) <= std::ceil(1.0 / f) + 1);
    }
  }
  CHECK_FALSE(is_validation_document(3, 0.0, 1));
  // The seed moves which documents are chosen: with f = 0.1 there are 10 possible choices (the
  // phase of the one-in-ten pattern); 30 seeds should hit most of them.
  std::set<std::vector<bool>> choices;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    std::vector<bool> v;
    for (std::uint64_t i = 0; i < 100; ++i) v.push_back(is_validation_document(i, 0.1, seed));
    choices.insert(v);
  }
  CHECK(choices.size() >= 5);
}

TEST_CASE("prepare writes nanoGPT files, llm.c shards and meta.json that agree", "[prepare]") {
  if (!tokenizer_or_skip()) return;
  TempDir dir("prepare_basic");
  PrepareOptions o = synthetic_options(dir.file("out"), 300);
  o.val_fraction = 0.1;
  o.shard_tokens = 5000;
  const PrepareResult r = run_prepare(o);
  CHECK(r.train.documents + r.val.documents == 300);
  CHECK(r.val.documents == 30);
  const MappedTokens train = MappedTokens::open(dir.file("out/train.bin"), TokenFileFormat::nanogpt);
  const MappedTokens val = MappedTokens::open(dir.file("out/val.bin"), TokenFileFormat::nanogpt);
  CHECK(train.size() == r.train.tokens);
  CHECK(val.size() == r.val.tokens);
  CHECK(train.tokens()[0] == 50256);
  CHECK(std::count(train.tokens().begin(), train.tokens().end(), 50256) == static_cast<long>(r.train.documents));
  CHECK(std::count(val.tokens().begin(), val.tokens().end(), 50256) == static_cast<long>(r.val.documents));
  train.check_ids_below(50257);
  // llm.c shards hold the same stream, cut every shard_tokens tokens.
  const auto shards = concat_shards(r.train.files);
  CHECK(std::equal(shards.begin(), shards.end(), train.tokens().begin(), train.tokens().end()));
  REQUIRE(r.train.files.size() >= 3);
  CHECK(fs::path(r.train.files[1]).filename() == "corpus_train_000000.bin");
  CHECK(MappedTokens::open(r.train.files[1]).size() == 5000);
  const auto meta = nlohmann::json::parse(slurp(r.meta_path));
  CHECK(meta["train"]["tokens"] == r.train.tokens);
  CHECK(meta["val"]["documents"] == 30);
  CHECK(meta["tokenizer"]["eot"] == 50256);
  CHECK(meta["tokenizer"]["sha256"] == "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930");
  CHECK(meta["sources"][0]["synthetic"]["n_docs"] == 300);
  for (const auto& e : fs::directory_iterator(dir.file("out"))) CHECK(e.path().extension() != ".tmp");
}

TEST_CASE("prepare output is byte-identical for 1 and 2 threads and any batch size", "[prepare]") {
  if (!tokenizer_or_skip()) return;
  TempDir dir("prepare_threads");
  std::vector<std::vector<std::string>> contents;
  for (const auto& [threads, batch] : {std::pair{1, 16u << 20}, std::pair{2, 16u << 20}, std::pair{2, 3000u}}) {
    const std::string out = dir.file("t" + std::to_string(threads) + "_" + std::to_string(batch));
    PrepareOptions o = synthetic_options(out, 200);
    o.threads = threads;
    o.batch_bytes = batch;
    o.shard_tokens = 7000;
    const PrepareResult r = run_prepare(o);
    std::vector<std::string> files;
    for (const auto* split : {&r.train.files, &r.val.files})
      for (const auto& f : *split) files.push_back(fs::path(f).filename().string() + ":" + slurp(f));
    contents.push_back(files);
  }
  CHECK(contents[0] == contents[1]);
  CHECK(contents[0] == contents[2]);
}

TEST_CASE("prepare reads text, JSONL and gzip inputs in order", "[prepare]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  TempDir dir("prepare_inputs");
  write(dir.file("a.txt"), "Alpha one.<|endoftext|>Alpha two.");
  write(dir.file("b.jsonl"), "{\"text\": \"Beta <|endoftext|> stays text.\"}\n{\"text\": \"Beta two.\"}\n");
  gzFile gz = gzopen(dir.file("c.jsonl.gz").c_str(), "wb");
  const std::string c = "{\"text\": \"Gamma, zipped.\"}\n";
  gzwrite(gz, c.data(), static_cast<unsigned>(c.size()));
  gzclose(gz);
  PrepareOptions o;
  o.inputs = {dir.file("a.txt"), dir.file("b.jsonl"), dir.file("c.jsonl.gz")};
  o.out_dir = dir.file("out");
  o.ranks_path = gaugelab::data::testing::ranks_path();
  o.val_fraction = 0.0;
  o.progress = false;
  const PrepareResult r = run_prepare(o);
  CHECK(r.train.documents == 5);
  CHECK(r.val.documents == 0);
  const MappedTokens m = MappedTokens::open(dir.file("out/train.bin"));
  const std::vector<TokenId> ids(m.tokens().begin(), m.tokens().end());
  CHECK(tok->decode(ids) == "<|endoftext|>Alpha one.<|endoftext|>Alpha two.<|endoftext|>Beta <|endoftext|> stays text."
                            "<|endoftext|>Beta two.<|endoftext|>Gamma, zipped.");
  CHECK(std::count(ids.begin(), ids.end(), 50256) == 5);  // the literal inside the JSON text is not the special token
  CHECK(MappedTokens::open(dir.file("out/corpus_val_000000.bin")).size() == 0);
  const auto meta = nlohmann::json::parse(slurp(r.meta_path));
  CHECK(meta["sources"][2]["gzip"] == true);
  CHECK(meta["sources"][1]["format"] == "jsonl");
  CHECK(meta["sources"][0]["documents"] == 2);
}

TEST_CASE("prepare refuses to overwrite without force, force replaces and drops stale shards", "[prepare]") {
  if (!tokenizer_or_skip()) return;
  TempDir dir("prepare_force");
  PrepareOptions o = synthetic_options(dir.file("out"), 100);
  o.shard_tokens = 2000;
  const PrepareResult first = run_prepare(o);
  REQUIRE(first.train.files.size() > 3);
  CHECK_THROWS_WITH(run_prepare(o), Catch::Contains("already exists (use --force"));
  o.write_nanogpt = false;  // only shards now, and far fewer of them
  o.shard_tokens = 1000000;
  fs::remove(dir.file("out/meta.json"));  // so the leftover shards are what it refuses
  CHECK_THROWS_WITH(run_prepare(o), Catch::Contains("corpus_train_00") && Catch::Contains("already exists"));
  o.force = true;
  const PrepareResult second = run_prepare(o);
  CHECK(second.train.files.size() == 1);
  CHECK_FALSE(fs::exists(dir.file("out/corpus_train_000001.bin")));
  CHECK(fs::exists(dir.file("out/train.bin")));  // not ours this time: left alone
}

TEST_CASE("a bad input line fails with file and line and leaves no outputs", "[prepare]") {
  if (!tokenizer_or_skip()) return;
  TempDir dir("prepare_bad");
  write(dir.file("ok.txt"), "fine");
  write(dir.file("bad.jsonl"), "{\"text\": \"a\"}\n{\"text\": 5}\n");
  PrepareOptions o;
  o.inputs = {dir.file("ok.txt"), dir.file("bad.jsonl")};
  o.out_dir = dir.file("out");
  o.ranks_path = gaugelab::data::testing::ranks_path();
  o.progress = false;
  CHECK_THROWS_WITH(run_prepare(o), Catch::Contains("bad.jsonl:2: no string field \"text\""));
  CHECK(!fs::exists(dir.file("out")));  // the folder it made is removed with what it held
  o.inputs = {dir.file("missing.txt")};
  CHECK_THROWS_WITH(run_prepare(o), Catch::Contains("missing.txt: cannot open"));
  CHECK(!fs::exists(dir.file("out")));
  o.inputs = {dir.file("ok.txt")};
  o.ranks_path = dir.file("nope.tiktoken");
  CHECK_THROWS_WITH(run_prepare(o), Catch::Contains("nope.tiktoken: cannot open"));
}

TEST_CASE("prepare options are validated with the option named", "[prepare]") {
  using gaugelab::io::UsageError;
  PrepareOptions o;
  o.out_dir = "x";
  CHECK_THROWS_AS(o.validate(), UsageError);  // no inputs
  o.inputs = {"a.txt"};
  CHECK_NOTHROW(o.validate());
  auto bad = [&](auto mutate, const char* what) {
    PrepareOptions p = o;
    mutate(p);
    CHECK_THROWS_WITH(p.validate(), Catch::Contains(what));
  };
  bad([](PrepareOptions& p) { p.synthetic = true; }, "not both");
  bad([](PrepareOptions& p) { p.out_dir.clear(); }, "--out-dir");
  bad([](PrepareOptions& p) { p.name = "a/b"; }, "--name");
  bad([](PrepareOptions& p) { p.val_fraction = 1.0; }, "--val-fraction");
  bad([](PrepareOptions& p) { p.val_fraction = std::nan(""); }, "--val-fraction");
  bad([](PrepareOptions& p) { p.shard_tokens = 0; }, "--shard-tokens");
  bad([](PrepareOptions& p) { p.shard_tokens = 1ull << 31; }, "--shard-tokens");
  bad([](PrepareOptions& p) { p.input_format = "csv"; }, "--input-format");
  bad([](PrepareOptions& p) { p.write_llmc = p.write_nanogpt = false; }, "nothing to write");
  bad([](PrepareOptions& p) { p.vocab_dir = "d", p.ranks_path = "r"; }, "not both");
  bad([](PrepareOptions& p) { p.threads = -1; }, "--threads");
}

}  // namespace GAUGELAB_TU
