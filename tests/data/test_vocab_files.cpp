// The two vocabulary routes (gpt2.tiktoken, encoder.json + vocab.bpe), their error messages, and
// the base64 / SHA-256 helpers they rest on.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "data/base64.hpp"
#include "data/bpe_vocab.hpp"
#include "data/sha256.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::TempDir;
using gaugelab::data::testing::tokenizer_or_skip;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A valid .tiktoken body: the 256 single bytes (ranks 0..255) plus `extra` lines.
std::string tiktoken_text(const std::string& extra = "") {
  std::string t;
  for (int b = 0; b < 256; ++b) t += base64_encode(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  return t + extra;
}

}  // namespace

TEST_CASE("SHA-256 of known vectors", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("base64 round-trips and rejects malformed text", "[base64]") {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\x00\xff\x10", 3)})
    CHECK(base64_decode(base64_encode(s)) == s);
  CHECK(base64_encode("Hello") == "SGVsbG8=");
  CHECK_FALSE(base64_decode("SGVsbG8"));    // length not a multiple of 4
  CHECK_FALSE(base64_decode("SGV*bG8="));   // bad character
  CHECK_FALSE(base64_decode("SG=sbG8="));   // padding in the middle
  CHECK_FALSE(base64_decode("SGVsbG9="));   // non-zero bits after the last byte
}

TEST_CASE("tiktoken loader errors name the file and line", "[vocab]") {
  TempDir dir("tiktoken_errors");
  const std::string p = dir.file("bad.tiktoken");
  CHECK_THROWS_WITH(load_tiktoken_ranks(dir.file("missing.tiktoken")), Catch::Contains("missing.tiktoken: cannot open"));
  write(p, tiktoken_text("YWI= 256\n!!!! 257\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("bad.tiktoken:258: bad base64"));
  write(p, tiktoken_text("YWI= 256\nYWJj\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("bad.tiktoken:258: expected '<base64 token> <rank>'"));
  write(p, tiktoken_text("YWI= x1\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("bad.tiktoken:257: bad rank 'x1'"));
  write(p, tiktoken_text("YWI= 256\nYWJj 256\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("rank 256 appears twice"));
  write(p, tiktoken_text("YWI= 257\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("bad.tiktoken:257: ranks are not contiguous: rank 256"));
  write(p, tiktoken_text("YQ== 256\n"));
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("bad.tiktoken:257: token bytes repeat those of rank 97"));
  std::string no_ff = tiktoken_text();
  no_ff.resize(no_ff.rfind("/w== 255"));
  write(p, no_ff);
  CHECK_THROWS_WITH(load_tiktoken_ranks(p), Catch::Contains("byte 255 is not a token"));
  write(p, tiktoken_text("YWI= 256\r\n\r\n"));  // CRLF and blank lines are accepted
  const BpeVocab v = load_tiktoken_ranks(p);
  CHECK(v.ranks.size() == 257);
  CHECK(v.eot == 257);
  CHECK(v.ranks.find("ab") == 256);
}

TEST_CASE("encoder.json + vocab.bpe written from gpt2.tiktoken are the published files and encode alike",
          "[vocab]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  TempDir dir("vocab_dir");
  write_gpt2_vocab_dir(tok->vocab(), dir.path.string());
  // Byte-identical to the original GPT-2 release (the SHA-256 sums of the published files).
  CHECK(sha256_file(dir.file("encoder.json")) == "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783");
  CHECK(sha256_file(dir.file("vocab.bpe")) == "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5");

  const Gpt2Tokenizer from_dir = Gpt2Tokenizer::from_vocab_dir(dir.path.string());
  REQUIRE(from_dir.vocab().ranks.size() == tok->vocab().ranks.size());
  CHECK(from_dir.eot() == 50256);
  for (TokenId r = 0; r < tok->vocab().ranks.size(); ++r)
    REQUIRE(from_dir.vocab().ranks.bytes_of(r) == tok->vocab().ranks.bytes_of(r));
  std::ifstream in(std::string(GAUGELAB_SOURCE_DIR) + "/tests/fixtures/tokenizer/gpt2_reference.json");
  const auto fx = nlohmann::json::parse(in);
  for (const auto& c : fx.at("cases")) {
    const std::string text = c.at("text");
    CHECK(from_dir.encode(text, SpecialTokens::allowed) == tok->encode(text, SpecialTokens::allowed));
  }
}

TEST_CASE("vocab dir errors name the file and line", "[vocab]") {
  TempDir dir("vocab_dir_errors");
  const std::string d = dir.path.string();
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("vocab.bpe: cannot open"));
  // \u0120 is the byte alphabet's space.
  write(dir.file("vocab.bpe"), "#version: 0.2\nĠ t\nh e\nĠt he\n");
  write(dir.file("encoder.json"), "{\"!\": 0,\n \"bad\": }");
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("encoder.json:2: bad JSON"));
  write(dir.file("vocab.bpe"), "#version: 0.2\nĠ t\nh e\nĠtx\n");
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("vocab.bpe:4: expected a merge"));
  write(dir.file("vocab.bpe"), "#version: 0.2\nĠ t\nh e\nĠt \xe2\x82\xac\n");
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("vocab.bpe:4: a character outside"));
  write(dir.file("vocab.bpe"), "#version: 0.2\nĠ t\nh e\nĠth e\n");
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("vocab.bpe:4: merges a part that no earlier line created"));
  write(dir.file("vocab.bpe"), "#version: 0.2\nĠ t\n");
  write(dir.file("encoder.json"), "{\"Ġt\": 300, \"<|endoftext|>\": 257}");
  CHECK_THROWS_WITH(load_gpt2_vocab_dir(d), Catch::Contains("has id 300 but vocab.bpe line 2 gives rank 256"));
}

}  // namespace GAUGELAB_TU
