// libFuzzer target: the corpus reader (text with <|endoftext|> separators, JSONL, either gzipped) on
// arbitrary bytes. The first byte picks the format and paragraph splitting; a refusal must be
// std::runtime_error naming the file (and line for JSONL).
#include <stdexcept>

#include "data/corpus_reader.hpp"
#include "fuzz_support.hpp"

namespace data = gaugelab::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t how = d[0];
  const std::string& path = gaugelab::fuzz::input_file(d + 1, size - 1, (how & 1) ? ".jsonl" : ".txt");
  try {
    data::DocumentReader r(path, (how & 1) ? data::InputFormat::jsonl : data::InputFormat::text, (how & 2) != 0,
                           (how & 4) ? "content" : "text");
    std::string doc;
    std::uint64_t total = 0;
    for (int i = 0; i < 100000 && r.next(doc); ++i) total += doc.size();
    if (!r.gzip() && total > size) __builtin_trap();  // documents come from the file's bytes
  } catch (const std::runtime_error&) {
  }
  return 0;
}
