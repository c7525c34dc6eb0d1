// The C++ GPT-2 tokenizer against tiktoken, token for token (fixture written by
// tests/reference/make_tokenizer_fixture.py from the same ranks file).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "data/sha256.hpp"
#include "data/tokenizer.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::tokenizer_or_skip;

namespace {

nlohmann::json load_fixture() {
  const std::string path = std::string(GAUGELAB_SOURCE_DIR) + "/tests/fixtures/tokenizer/gpt2_reference.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

TEST_CASE("Hello world encodes to 15496, 995", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  CHECK(tok->encode_ordinary("Hello world") == std::vector<TokenId>{15496, 995});
  CHECK(tok->eot() == 50256);
  CHECK(tok->vocab_size() == 50257);
  CHECK(tok->vocab().sha256 == "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930");
}

TEST_CASE("fixture texts match tiktoken token for token and round-trip", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const nlohmann::json fx = load_fixture();
  REQUIRE(fx.at("ranks_sha256") == tok->vocab().sha256);
  REQUIRE(fx.at("cases").size() >= 60);
  EncodeScratch scratch;  // shared across cases so the piece cache is exercised too
  for (const auto& c : fx.at("cases")) {
    const std::string text = c.at("text");
    const auto want = c.at("tokens").get<std::vector<TokenId>>();
    const SpecialTokens mode = c.at("special") == "allowed" ? SpecialTokens::allowed : SpecialTokens::as_text;
    INFO("case " << c.at("name").get<std::string>());
    CHECK(tok->encode(text, mode) == want);
    std::vector<TokenId> again;
    tok->encode_into(text, mode, again, scratch);
    CHECK(again == want);
    CHECK(tok->decode(want) == text);
  }
}

TEST_CASE("invalid UTF-8 fixture: surrogateescape rule, BPE per piece", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const nlohmann::json fx = load_fixture();
  REQUIRE(fx.at("byte_cases").size() >= 20);
  for (const auto& c : fx.at("byte_cases")) {
    const std::string bytes = from_hex(c.at("hex"));
    INFO("case " << c.at("name").get<std::string>());
    const auto got = tok->encode_ordinary(bytes);
    CHECK(got == c.at("tokens").get<std::vector<TokenId>>());
    CHECK(tok->decode(got) == bytes);
  }
}

TEST_CASE("special token modes", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const std::string text = "a<|endoftext|>b";
  CHECK(tok->encode(text, SpecialTokens::allowed) == std::vector<TokenId>{64, 50256, 65});
  const auto plain = tok->encode(text, SpecialTokens::as_text);
  CHECK(plain.size() == 9);  // "a", "<", "|", "end", "of", "text", "|", ">", "b" per tiktoken
  CHECK(std::find(plain.begin(), plain.end(), TokenId{50256}) == plain.end());
  CHECK(tok->decode(plain) == text);
  CHECK_THROWS_WITH(tok->encode(text, SpecialTokens::rejected), Catch::Contains("at byte 1"));
  CHECK(tok->encode("no special here", SpecialTokens::rejected) == tok->encode_ordinary("no special here"));
  CHECK(tok->decode(std::vector<TokenId>{50256}) == "<|endoftext|>");
}

TEST_CASE("decode refuses ids outside the vocabulary", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  CHECK_THROWS_WITH(tok->decode(std::vector<TokenId>{15496, 50257}), Catch::Contains("50257 is out of range"));
}

TEST_CASE("a tiny cache gives the same tokens as a large one", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const std::string text = "Zebras zigzag; zebras zigzagged. Unbelievably, unbelievable zigzaggers zigzag again.";
  EncodeScratch tiny(1), none(0), big;
  std::vector<TokenId> a, b, c;
  for (int rep = 0; rep < 3; ++rep) {
    tok->encode_into(text, SpecialTokens::as_text, a, tiny);
    tok->encode_into(text, SpecialTokens::as_text, b, none);
    tok->encode_into(text, SpecialTokens::as_text, c, big);
  }
  CHECK(a == b);
  CHECK(b == c);
}

}  // namespace GAUGELAB_TU
