// libFuzzer target: token files (nanoGPT .bin without a header, llm.c with its 256-int header) as the
// data loader opens them: format detection, the memory map's validation, the id check against GPT-2's
// vocabulary. Refusals must be std::runtime_error.
#include <stdexcept>

#include "data/token_files.hpp"
#include "fuzz_support.hpp"

namespace data = gaugelab::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  const std::string& path = gaugelab::fuzz::input_file(d, size, ".bin");
  for (int how = 0; how < 3; ++how) {
    try {
      const data::MappedTokens t = how == 0   ? data::MappedTokens::open(path)
                                   : how == 1 ? data::MappedTokens::open(path, data::TokenFileFormat::nanogpt)
                                              : data::MappedTokens::open(path, data::TokenFileFormat::llmc);
      std::uint32_t sum = 0;
      for (const std::uint16_t id : t.tokens()) sum += id;  // every id readable
      (void)sum;
      t.check_ids_below(50257);
    } catch (const std::runtime_error&) {
    }
  }
  return 0;
}
