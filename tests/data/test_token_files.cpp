// nanoGPT and llm.c token files: writers, memory-mapped readers, and the errors for bad files.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <vector>

#include "data/token_files.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::TempDir;

namespace {

void write_raw(const std::string& path, const std::vector<std::int32_t>& header, const std::vector<std::uint16_t>& toks) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), static_cast<std::streamsize>(header.size() * 4));
  out.write(reinterpret_cast<const char*>(toks.data()), static_cast<std::streamsize>(toks.size() * 2));
}

std::vector<std::int32_t> header(std::int32_t magic, std::int32_t version, std::int32_t count) {
  std::vector<std::int32_t> h(kLlmcHeaderInts, 0);
  h[0] = magic, h[1] = version, h[2] = count;
  return h;
}

}  // namespace

TEST_CASE("both formats round-trip through writer and mapped reader", "[shards]") {
  TempDir dir("shards_roundtrip");
  std::vector<TokenId> toks;
  for (TokenId i = 0; i < 5000; ++i) toks.push_back((i * 7919u) % 65536u);
  for (const TokenFileFormat f : {TokenFileFormat::nanogpt, TokenFileFormat::llmc}) {
    const std::string p = dir.file(std::string(to_string(f)) + ".bin");
    TokenFileWriter w(p, f);
    w.append(std::span(toks).first(1234));
    w.append(std::span(toks).subspan(1234));
    w.close();
    CHECK(w.count() == toks.size());
    const MappedTokens m = MappedTokens::open(p);  // format detected
    CHECK(m.format() == f);
    REQUIRE(m.size() == toks.size());
    for (std::size_t i = 0; i < toks.size(); ++i) REQUIRE(m.tokens()[i] == toks[i]);
    CHECK(std::filesystem::file_size(p) == toks.size() * 2 + (f == TokenFileFormat::llmc ? kLlmcHeaderBytes : 0));
  }
}

TEST_CASE("llm.c header holds magic, version and count", "[shards]") {
  TempDir dir("shards_header");
  const std::string p = dir.file("s.bin");
  write_token_file(p, std::vector<TokenId>{1, 2, 3}, TokenFileFormat::llmc);
  std::ifstream in(p, std::ios::binary);
  std::vector<std::int32_t> h(kLlmcHeaderInts);
  in.read(reinterpret_cast<char*>(h.data()), static_cast<std::streamsize>(kLlmcHeaderBytes));
  CHECK(h[0] == 20240520);
  CHECK(h[1] == 1);
  CHECK(h[2] == 3);
  for (std::size_t i = 3; i < h.size(); ++i) REQUIRE(h[i] == 0);
}

TEST_CASE("empty files are valid in both formats", "[shards]") {
  TempDir dir("shards_empty");
  write_token_file(dir.file("a.bin"), {}, TokenFileFormat::nanogpt);
  write_token_file(dir.file("b.bin"), {}, TokenFileFormat::llmc);
  CHECK(MappedTokens::open(dir.file("a.bin"), TokenFileFormat::nanogpt).size() == 0);
  CHECK(MappedTokens::open(dir.file("b.bin"), TokenFileFormat::llmc).size() == 0);
}

TEST_CASE("writers refuse ids that do not fit uint16", "[shards]") {
  TempDir dir("shards_refuse");
  TokenFileWriter w(dir.file("x.bin"), TokenFileFormat::nanogpt);
  w.append(std::vector<TokenId>{1, 65535});
  CHECK_THROWS_WITH(w.append(std::vector<TokenId>{7, 65536}),
                    Catch::Contains("token id 65536 at position 3 does not fit uint16"));
  w.close();
  CHECK(MappedTokens::open(dir.file("x.bin"), TokenFileFormat::nanogpt).size() == 2);  // nothing of the refused call
}

TEST_CASE("hand-made bad files give one-line errors naming the file", "[shards]") {
  TempDir dir("shards_bad");
  const std::string p = dir.file("bad.bin");
  using Catch::Contains;
  write_raw(p, header(kLlmcMagic, 1, 10), std::vector<std::uint16_t>(9, 1));  // one token short
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("bad.bin: size 1042 bytes does not match the header's 10 tokens"));
  write_raw(p, header(kLlmcMagic, 1, 10), std::vector<std::uint16_t>(11, 1));  // trailing garbage
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("expected 1044 bytes"));
  write_raw(p, header(12345, 1, 2), {1, 2});
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("not an llm.c token shard (magic 12345"));
  write_raw(p, header(kLlmcMagic, 2, 2), {1, 2});
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("unsupported llm.c shard version 2"));
  write_raw(p, header(kLlmcMagic, 1, -5), {});
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("negative token count"));
  write_raw(p, std::vector<std::int32_t>(100, 0), {});  // header cut short
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::llmc), Contains("truncated llm.c shard: 400 bytes"));
  {
    std::ofstream out(p, std::ios::binary);
    out << "abc";  // odd size
  }
  CHECK_THROWS_WITH(MappedTokens::open(p, TokenFileFormat::nanogpt), Contains("bad.bin: size 3 bytes is odd"));
  CHECK_THROWS_WITH(MappedTokens::open(dir.file("missing.bin")), Contains("missing.bin: cannot open"));
}

TEST_CASE("id range check names the position", "[shards]") {
  TempDir dir("shards_range");
  write_token_file(dir.file("t.bin"), std::vector<TokenId>{5, 50256, 50257, 3}, TokenFileFormat::nanogpt);
  const MappedTokens m = MappedTokens::open(dir.file("t.bin"));
  CHECK_NOTHROW(m.check_ids_below(50258));
  CHECK_THROWS_WITH(m.check_ids_below(50257), Catch::Contains("token id 50257 at position 2"));
}

TEST_CASE("a mapped file can be moved", "[shards]") {
  TempDir dir("shards_move");
  write_token_file(dir.file("t.bin"), std::vector<TokenId>{9, 8, 7}, TokenFileFormat::llmc);
  MappedTokens a = MappedTokens::open(dir.file("t.bin"));
  MappedTokens b = std::move(a);
  CHECK(a.size() == 0);
  REQUIRE(b.size() == 3);
  CHECK(b.tokens()[2] == 7);
}

}  // namespace GAUGELAB_TU
