// libFuzzer target: the corpus reader (text with <|endoftext|> separators, JSONL, either gzipped) on
// arbitrary bytes. The first byte picks the format, paragraph splitting, the JSON field and a read size of 1 to 156
// bytes (at least size/256, so that a run of blanks rescanned at every read stays linear enough for the hang
// limit). A refusal must be std::runtime_error naming the file (and line for JSONL). The documents must not depend
// on the read size: the file is read twice, in reads that hold it whole and in the small ones (every separator then
// straddles reads), and both must give the same documents and the same error. Not for a gzip stream that zlib finds
// corrupt: gzread then drops what it decoded in that call, so the two reads stop at different places (and may stop
// on different errors, or one on the 100,000-document cap); there the fewer documents must be the first of the
// others.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/corpus_reader.hpp"
#include "fuzz_support.hpp"

namespace data = gaugelab::data;

namespace {

struct Read {
  std::vector<std::string> docs;
  std::string error;  // empty: the file was read to its end
  bool gzip = false;
  std::uint64_t total = 0;
};

Read read_all(const std::string& path, std::uint8_t how, std::size_t read_chunk) {
  Read out;
  try {
    data::DocumentReader r(path, (how & 1) ? data::InputFormat::jsonl : data::InputFormat::text, (how & 2) != 0,
                           (how & 4) ? "content" : "text", read_chunk);
    out.gzip = r.gzip();
    std::string doc;
    for (int i = 0; i < 100000 && r.next(doc); ++i) {
      out.total += doc.size();
      out.docs.push_back(doc);
    }
  } catch (const std::runtime_error& e) {
    out.error = e.what();
    if (out.error.empty()) __builtin_trap();  // a refusal names what it refuses
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t how = d[0];
  const std::string& path = gaugelab::fuzz::input_file(d + 1, size - 1, (how & 1) ? ".jsonl" : ".txt");
  const Read whole = read_all(path, how, size);  // one read holds the file (unless gzipped)
  const Read small = read_all(path, how, std::max<std::size_t>(1 + ((how >> 3) & 31) * 5, size / 256));
  if (!whole.gzip && whole.total > size) __builtin_trap();  // documents come from the file's bytes
  const auto stopped_early = [](const Read& r) {
    return r.error.find("read failed") != std::string::npos || r.docs.size() >= 100000;
  };
  if (whole.gzip && (stopped_early(whole) || stopped_early(small))) {  // corrupt gzip: see above
    const Read& fewer = whole.docs.size() <= small.docs.size() ? whole : small;
    const Read& more = whole.docs.size() <= small.docs.size() ? small : whole;
    if (!std::equal(fewer.docs.begin(), fewer.docs.end(), more.docs.begin())) __builtin_trap();
  } else if (whole.error != small.error || whole.docs != small.docs) {
    __builtin_trap();
  }
  return 0;
}
