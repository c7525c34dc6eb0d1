// The two merge loops (flat and heap) must give identical tokens.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "core/random.hpp"
#include "data/bpe_merge.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::core::Rng;
using gaugelab::data::testing::tokenizer_or_skip;

namespace {

// A small vocabulary over a 4-letter alphabet: all bytes, then merges learned greedily from random
// text (most frequent adjacent pair first), so ties, overlaps ("aaa") and chains all occur.
RankTable toy_ranks(Rng& rng) {
  RankTable r;
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    r.push(std::string_view(&c, 1));
  }
  std::string text;
  for (int i = 0; i < 4000; ++i) text += "abcd"[rng() % 4];
  std::vector<std::string> parts;
  for (char c : text) parts.emplace_back(1, c);
  for (int merge = 0; merge < 60; ++merge) {
    std::map<std::string, int> count;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) ++count[parts[i] + "\x01" + parts[i + 1]];
    auto best = std::max_element(count.begin(), count.end(), [](auto& a, auto& b) { return a.second < b.second; });
    if (best == count.end()) break;
    const auto sep = best->first.find('\x01');
    const std::string a = best->first.substr(0, sep), b = best->first.substr(sep + 1);
    if (r.push(a + b) != RankTable::npos) continue;  // same bytes from another pair: keep the first rank
    std::vector<std::string> next;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i + 1 < parts.size() && parts[i] == a && parts[i + 1] == b) next.push_back(a + b), ++i;
      else next.push_back(parts[i]);
    }
    parts.swap(next);
  }
  return r;
}

void check_agree(const RankTable& ranks, const std::string& piece, BpeScratch& s) {
  std::vector<TokenId> flat, heap;
  bpe_merge_flat(ranks, piece, flat, s);
  bpe_merge_heap(ranks, piece, heap, s);
  REQUIRE(flat == heap);
  std::string joined;
  for (TokenId id : flat) joined += ranks.bytes_of(id);
  REQUIRE(joined == piece);
}

}  // namespace

TEST_CASE("flat and heap merges agree on a toy vocabulary", "[bpe]") {
  Rng rng(99);
  const RankTable ranks = toy_ranks(rng);
  REQUIRE(ranks.size() > 280);
  BpeScratch s;
  for (int t = 0; t < 3000; ++t) {
    std::string piece;
    const std::size_t len = 1 + rng() % 200;
    for (std::size_t i = 0; i < len; ++i) piece += "abcd"[rng() % (t % 3 == 0 ? 1 : 4)];
    check_agree(ranks, piece, s);
  }
}

TEST_CASE("flat and heap merges agree on GPT-2 ranks", "[bpe]") {
  const Gpt2Tokenizer* tok = tokenizer_or_skip();
  if (!tok) return;
  const RankTable& ranks = tok->vocab().ranks;
  Rng rng(5);
  BpeScratch s;
  static const char* const kWords[] = {"the", "ing", "tion", "un", "believ", "able", " ", "zz", "000", "ab", "Ġ", "\xff"};
  for (int t = 0; t < 2000; ++t) {
    std::string piece;
    const std::size_t words = 1 + rng() % 40;
    for (std::size_t i = 0; i < words; ++i) piece += kWords[rng() % (sizeof kWords / sizeof kWords[0])];
    check_agree(ranks, piece, s);
  }
}

TEST_CASE("rank table finds every token and rejects duplicates", "[bpe]") {
  RankTable r;
  CHECK(r.find("x") == RankTable::npos);
  for (int i = 0; i < 1000; ++i) CHECK(r.push("tok" + std::to_string(i)) == RankTable::npos);
  CHECK(r.push("tok17") == 17u);
  CHECK(r.size() == 1000u);
  for (int i = 0; i < 1000; ++i) CHECK(r.find("tok" + std::to_string(i)) == static_cast<TokenId>(i));
  CHECK(r.find("tok1000") == RankTable::npos);
}

}  // namespace GAUGELAB_TU
