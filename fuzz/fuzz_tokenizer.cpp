// libFuzzer target: the GPT-2 BPE tokenizer on arbitrary bytes. decode(encode(bytes)) must give the bytes
// back exactly, with the special token read as text or as the token; every id must be in the vocabulary.
// The ranks file is $GAUGELAB_ASSETS/gpt2.tiktoken or the set-up script's (Gpt2Tokenizer::default_ranks_path).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "data/tokenizer.hpp"
#include "fuzz_support.hpp"

namespace data = gaugelab::data;

namespace {
const data::Gpt2Tokenizer& tokenizer() {
  static const data::Gpt2Tokenizer t = [] {
    try {
      return data::Gpt2Tokenizer::from_tiktoken(data::Gpt2Tokenizer::default_ranks_path());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_tokenizer: %s (run scripts/install-deps.sh)\n", e.what());
      std::exit(2);
    }
  }();
  return t;
}
}  // namespace

// The ranks (50k entries) load here, before libFuzzer's -timeout clock runs: loaded by the first input, on
// a busy machine they made that input (the empty one) a 12 s "timeout" of its own.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  const data::Gpt2Tokenizer& tok = tokenizer();
  const std::string_view text = gaugelab::fuzz::as_text(d, size);
  for (const auto special : {data::SpecialTokens::as_text, data::SpecialTokens::allowed}) {
    const auto ids = tok.encode(text, special);
    for (const auto id : ids)
      if (id >= tok.vocab_size()) __builtin_trap();
    if (tok.decode(ids) != text) __builtin_trap();  // the round trip is exact on every byte string
  }
  return 0;
}
