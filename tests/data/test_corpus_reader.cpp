// Documents from text and JSONL files, plain or gzip.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <fstream>

#include "data/corpus_reader.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::TempDir;

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

void write_gz(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(f);
}

std::vector<std::string> read_all(const std::string& path, InputFormat f, bool paragraphs = false,
                                  std::size_t read_chunk = kDefaultReadChunk) {
  DocumentReader r(path, f, paragraphs, "text", read_chunk);
  std::vector<std::string> docs;
  std::string d;
  while (r.next(d)) docs.push_back(d);
  return docs;
}

}  // namespace

TEST_CASE("text files: <|endoftext|> separates documents, whitespace-only ones are dropped", "[corpus]") {
  TempDir dir("corpus_text");
  using V = std::vector<std::string>;
  write(dir.file("a.txt"), "first doc\n<|endoftext|>second\n\n doc<|endoftext|>  \n<|endoftext|>third");
  CHECK(read_all(dir.file("a.txt"), InputFormat::text) == V{"first doc\n", "second\n\n doc", "third"});
  write(dir.file("b.txt"), "one whole file\n\nwith paragraphs\n");
  CHECK(read_all(dir.file("b.txt"), InputFormat::text) == V{"one whole file\n\nwith paragraphs\n"});
  CHECK(read_all(dir.file("b.txt"), InputFormat::text, true) == V{"one whole file", "with paragraphs\n"});
  write(dir.file("c.txt"), "\n\npara one\nline two\n \t\n\r\n  indented para<|endoftext|>next\n\n\n");
  CHECK(read_all(dir.file("c.txt"), InputFormat::text, true) == V{"para one\nline two", "  indented para", "next"});
  write(dir.file("empty.txt"), "");
  CHECK(read_all(dir.file("empty.txt"), InputFormat::text).empty());
}

TEST_CASE("separators that straddle read chunks are found", "[corpus]") {
  TempDir dir("corpus_chunks");
  // Documents of ~300 KiB so separators fall across the reader's 1 MiB chunks at many offsets.
  std::vector<std::string> want;
  std::string text;
  for (int i = 0; i < 12; ++i) {
    want.push_back(std::string(300000 + 977 * i, static_cast<char>('a' + i)));
    text += want.back() + (i % 2 ? "<|endoftext|>" : "\n \n\n");
  }
  write(dir.file("big.txt"), text);
  CHECK(read_all(dir.file("big.txt"), InputFormat::text, true) == want);
  write_gz(dir.file("big.txt.gz"), text);
  CHECK(read_all(dir.file("big.txt.gz"), InputFormat::text, true) == want);
}

TEST_CASE("the documents do not depend on the read size, down to one byte a read", "[corpus]") {
  TempDir dir("corpus_read_sizes");
  using V = std::vector<std::string>;
  // separators at every offset of small reads: EOT, blank lines of spaces, tabs and \r, a partial EOT, JSONL lines
  const std::string text = "one<|endoftext|>two\n \t\n\r\nthree<|endoftext|><|endoftext|>  \n\n<|endoftext"
                           "|>four <|endoftext four\n\n\n\nfive<|endoftext|>";
  write(dir.file("a.txt"), text);
  write_gz(dir.file("a.txt.gz"), text);
  write(dir.file("a.jsonl"), "{\"text\": \"x<|endoftext|>\"}\n\n  \n{\"text\": \"y\\n\\n\"}\n{\"text\": \"z\"}");
  for (const bool paragraphs : {false, true}) {
    const V want = read_all(dir.file("a.txt"), InputFormat::text, paragraphs);
    CHECK(want.size() == (paragraphs ? 5u : 3u));
    for (const std::size_t chunk : {1, 2, 3, 5, 12, 13, 14, 40}) {
      INFO("paragraphs " << paragraphs << ", " << chunk << " bytes a read");
      CHECK(read_all(dir.file("a.txt"), InputFormat::text, paragraphs, chunk) == want);
      CHECK(read_all(dir.file("a.txt.gz"), InputFormat::text, paragraphs, chunk) == want);
      CHECK(read_all(dir.file("a.jsonl"), InputFormat::jsonl, paragraphs, chunk) == V{"x<|endoftext|>", "y\n\n", "z"});
    }
  }
  CHECK_THROWS_AS(read_all(dir.file("a.txt"), InputFormat::text, false, 0), std::invalid_argument);
  DocumentReader r(dir.file("a.txt"), InputFormat::text, false, "text", 3);  // the read size is the one used
  std::string first;
  REQUIRE(r.next(first));
  CHECK(first == "one");
  CHECK(r.bytes_read() <= 3 + 16);  // "one" and its separator, in 3-byte reads: far short of the file
  CHECK(r.bytes_read() < text.size());
}

TEST_CASE("JSONL: the text field of each line, bad lines name file and line", "[corpus]") {
  TempDir dir("corpus_jsonl");
  write(dir.file("a.jsonl"), "{\"text\": \"hello\", \"id\": 1}\n\n{\"text\": \"a <|endoftext|> b\\n\"}\n{\"text\": \"last\"}");
  CHECK(read_all(dir.file("a.jsonl"), InputFormat::jsonl) ==
        std::vector<std::string>{"hello", "a <|endoftext|> b\n", "last"});
  write(dir.file("bad.jsonl"), "{\"text\": \"ok\"}\n{\"text\": \"unterminated}\n");
  CHECK_THROWS_WITH(read_all(dir.file("bad.jsonl"), InputFormat::jsonl), Catch::Contains("bad.jsonl:2: bad JSON"));
  write(dir.file("nofield.jsonl"), "{\"text\": \"ok\"}\n\n{\"body\": \"x\"}\n");
  CHECK_THROWS_WITH(read_all(dir.file("nofield.jsonl"), InputFormat::jsonl),
                    Catch::Contains("nofield.jsonl:3: no string field \"text\""));
  write(dir.file("array.jsonl"), "[1, 2]\n");
  CHECK_THROWS_WITH(read_all(dir.file("array.jsonl"), InputFormat::jsonl), Catch::Contains("array.jsonl:1: expected a JSON object"));
}

TEST_CASE("gzip is detected by magic bytes, format by name", "[corpus]") {
  TempDir dir("corpus_gzip");
  write_gz(dir.file("docs.jsonl.gz"), "{\"text\": \"zipped\"}\n");
  write_gz(dir.file("misnamed.txt"), "gzip without .gz");
  write(dir.file("plain.gz"), "not compressed");
  CHECK(is_gzip_file(dir.file("docs.jsonl.gz")));
  CHECK(is_gzip_file(dir.file("misnamed.txt")));
  CHECK_FALSE(is_gzip_file(dir.file("plain.gz")));
  CHECK(input_format_from_name("x/docs.jsonl.gz") == InputFormat::jsonl);
  CHECK(input_format_from_name("a.ndjson") == InputFormat::jsonl);
  CHECK(input_format_from_name("a.txt.gz") == InputFormat::text);
  CHECK(read_all(dir.file("docs.jsonl.gz"), InputFormat::jsonl) == std::vector<std::string>{"zipped"});
  CHECK(read_all(dir.file("misnamed.txt"), InputFormat::text) == std::vector<std::string>{"gzip without .gz"});
  CHECK(read_all(dir.file("plain.gz"), InputFormat::text) == std::vector<std::string>{"not compressed"});
}

TEST_CASE("a truncated gzip file is an error, not a short corpus", "[corpus]") {
  TempDir dir("corpus_gzip_cut");
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 7919) + " of a longer document\n";
  write_gz(dir.file("full.txt.gz"), text);
  std::ifstream in(dir.file("full.txt.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write(dir.file("cut.txt.gz"), gz.substr(0, gz.size() / 2));
  CHECK_THROWS_WITH(read_all(dir.file("cut.txt.gz"), InputFormat::text), Catch::Contains("cut.txt.gz: read failed"));
  CHECK_THROWS_WITH(read_all(dir.file("none.txt"), InputFormat::text), Catch::Contains("none.txt: cannot open"));
}

}  // namespace GAUGELAB_TU
