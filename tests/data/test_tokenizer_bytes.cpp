// Arbitrary bytes: UTF-8 classification, pre-tokenizer tiling, encode/decode round trips, and
// inputs large enough that a quadratic step would not finish.
#include <catch2/catch.hpp>

#include <string>

#include "core/random.hpp"
#include "data/pretokenizer.hpp"
#include "data/utf8.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::core::Rng;
using gaugelab::data::testing::tokenizer_or_skip;

namespace {

// Byte strings biased towards the interesting cases: ASCII text, valid multi-byte sequences,
// truncated sequences, stray continuation bytes, surrogates and fully random bytes.
std::string random_bytes(Rng& rng, std::size_t max_len) {
  static const char* const kPieces[] = {"a", "Z", " ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "!", "9", "\xc3\xa9",
                                        "\xe2\x80\x9c", "\xf0\x9f\x98\x80", "\xe6\x97\xa5", "\xff", "\xe2", "\x80",
                                        "\xc3", "\xf0\x9f", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "<|endoftext|>"};
  const std::size_t len = static_cast<std::size_t>(gaugelab::core::uniform01(rng) * static_cast<double>(max_len + 1));
  std::string s;
  const bool uniform_bytes = rng() % 4 == 0;
  while (s.size() < len) {
    if (uniform_bytes) s += static_cast<char>(rng() & 0xFF);
    else s += kPieces[rng() % (sizeof kPieces / sizeof kPieces[0])];
  }
  return s;
}

// Brute force: does a well-formed sequence start at i? Decode and check the code point range.
std::size_t reference_sequence_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d >> 6) != 2) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  static const char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

TEST_CASE("UTF-8 classification agrees with a brute-force decoder", "[utf8]") {
  Rng rng(20240520);
  for (int t = 0; t < 2000; ++t) {
    const std::string s = random_bytes(rng, 40);
    std::size_t ref_prefix = s.size();
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t len = reference_sequence_length(s, i);
      REQUIRE(utf8_sequence_length(s, i) == len);
      if (len == 0) {
        ref_prefix = std::min(ref_prefix, i);
        ++i;
      } else {
        i += len;
      }
    }
    REQUIRE(utf8_valid_prefix(s) == ref_prefix);
  }
}

TEST_CASE("pre-tokenizer pieces tile any byte string", "[pretokenizer]") {
  const Gpt2PreTokenizer pre;
  INFO("PCRE2 JIT: " << pre.jit());
  Rng rng(7);
  PreTokenizerScratch scratch;
  for (int t = 0; t < 1000; ++t) {
    const std::string s = random_bytes(rng, 120);
    std::size_t expect_begin = 0;
    std::string joined;
    pre.for_each_piece(s, scratch, [&](std::size_t b, std::size_t e) {
      REQUIRE(b == expect_begin);
      REQUIRE(e > b);
      joined.append(s, b, e - b);
      expect_begin = e;
    });
    REQUIRE(joined == s);
  }
}

TEST_CASE("pre-tokenizer splits like the GPT-2 pattern on known inputs", "[pretokenizer]") {
  const Gpt2PreTokenizer pre;
  using V = std::vector<std::string>;
  CHECK(pre.split("Hello world") == V{"Hello", " world"});
  CHECK(pre.split("it's  done\n\n") == V{"it", "'s", " ", " done", "\n\n"});
  CHECK(pre.split("x   y") == V{"x", "  ", " y"});  // \s+(?!\S) leaves the last space to the word
  CHECK(pre.split("a\xe1\xa0\x8e b") == V{"a", "\xe1\xa0\x8e", " b"});  // U+180E is not a space here
  CHECK(pre.split("!\xff!") == V{"!\xff!"});      // an invalid byte is a symbol
  CHECK(pre.split(" \xff's") == V{" \xff'", "s"});  // like " !'s": the symbol run takes the apostrophe
  CHECK(pre.split("") == V{});
}

TEST_CASE("1000 random byte strings round-trip through encode and decode", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  Rng rng(1234);
  EncodeScratch scratch;
  for (int t = 0; t < 1000; ++t) {
    const std::string s = random_bytes(rng, 200);
    std::vector<TokenId> ids;
    tok->encode_into(s, SpecialTokens::as_text, ids, scratch);
    REQUIRE(tok->decode(ids) == s);
    for (TokenId id : ids) REQUIRE(id < tok->eot());  // as text: never the special token
    std::vector<TokenId> with_special;
    tok->encode_into(s, SpecialTokens::allowed, with_special, scratch);
    REQUIRE(tok->decode(with_special) == s);
  }
}

TEST_CASE("megabyte-long runs encode without blowing up and round-trip", "[tokenizer]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  // Each is one enormous pre-token (or run) that a quadratic merge or a recursive regex would choke on.
  const std::size_t n = 1 << 20;
  for (const std::string& s : {std::string(n, ' '), std::string(n, 'a'), std::string(n, '7'), std::string(n, '\xff'),
                               std::string(n, '\n'), std::string(n, '=')}) {
    const auto ids = tok->encode_ordinary(s);
    CHECK(tok->decode(ids) == s);
    CHECK(ids.size() <= s.size());
  }
}

}  // namespace GAUGELAB_TU
