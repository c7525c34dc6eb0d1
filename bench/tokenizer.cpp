// GPT-2 BPE encoding rate, single thread, ours vs tiktoken measured in the same run on the same text
// (issue target: >= 5 MB/s per core). Text: the built-in synthetic corpus (data/README.md also lists a
// measurement on English text). Token counts must agree: a speed number for a tokenizer that
// disagrees would mean nothing.
// usage: tokenizer [--docs N] [--repeats R] [--python PATH]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "data/synthetic_corpus.hpp"
#include "data/tokenizer.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string default_python() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/gaugelab/venv/bin/python";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gaugelab::data;
  std::size_t docs = 8000;
  int repeats = 3;
  std::string python = default_python();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--docs") docs = std::stoul(argv[i + 1]);
    else if (k == "--repeats") repeats = std::stoi(argv[i + 1]);
    else if (k == "--python") python = argv[i + 1];
    else { std::cerr << "tokenizer: unknown flag " << k << "\n"; return 2; }
  }
  const std::string ranks = Gpt2Tokenizer::default_ranks_path();
  if (!std::filesystem::exists(ranks)) {
    std::cout << "tokenizer: SKIPPED: no GPT-2 ranks at " << ranks << " (scripts/install-deps.sh puts them there)\n";
    return 0;
  }
  const Gpt2Tokenizer tok = Gpt2Tokenizer::from_tiktoken(ranks);
  SyntheticCorpusOptions corpus;
  corpus.n_docs = docs;
  std::string text;
  for (std::size_t i = 0; i < docs; ++i) text += synthetic_document(corpus, i) + "\n";
  const auto path = std::filesystem::temp_directory_path() / "gaugelab_bench_tokenizer.txt";
  std::ofstream(path, std::ios::binary) << text;

  std::size_t n_ours = 0;
  double best_cache = 1e300, best_nocache = 1e300;
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t cache : {std::size_t{1} << 16, std::size_t{0}}) {
      EncodeScratch scratch(cache);  // fresh per repeat: no warm cache carried between timings
      std::vector<TokenId> out;
      out.reserve(text.size() / 3);
      const auto t0 = std::chrono::steady_clock::now();
      tok.encode_into(text, SpecialTokens::as_text, out, scratch);
      const double s = seconds_since(t0);
      (cache ? best_cache : best_nocache) = std::min(cache ? best_cache : best_nocache, s);
      n_ours = out.size();
    }
  }
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("tokenizer: synthetic corpus, %zu docs, %.1f MB, %zu tokens, best of %d, 1 thread\n", docs, mb, n_ours,
              repeats);
  std::printf("  ours (piece cache on)   %7.2f MB/s\n", mb / best_cache);
  std::printf("  ours (piece cache off)  %7.2f MB/s\n", mb / best_nocache);

  const std::string cmd = "'" + python + "' '" GAUGELAB_SOURCE_DIR "/bench/reference/tiktoken_rate.py' '" + ranks +
                          "' '" + path.string() + "' " + std::to_string(repeats) + " 2>/dev/null";
  double bytes = 0, secs = 0;
  std::size_t n_ref = 0;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    if (std::fscanf(p, "%lf %zu %lf", &bytes, &n_ref, &secs) != 3) secs = 0;
    pclose(p);
  }
  std::filesystem::remove(path);
  if (secs <= 0) {
    std::printf("  tiktoken: not measured (no venv Python with tiktoken at %s)\n", python.c_str());
    return 0;
  }
  std::printf("  tiktoken (same text)    %7.2f MB/s\n", bytes / 1e6 / secs);
  std::printf("  ratio ours/tiktoken: %.2fx (cache on), %.2fx (cache off); target >= 5 MB/s per core: %s\n",
              (bytes / 1e6 / secs) > 0 ? (mb / best_cache) / (bytes / 1e6 / secs) : 0.0,
              (mb / best_nocache) / (bytes / 1e6 / secs), mb / best_nocache >= 5.0 ? "met" : "NOT met");
  if (n_ref != n_ours) {
    std::printf("  token counts DIFFER: ours %zu, tiktoken %zu\n", n_ours, n_ref);
    return 1;
  }
  std::printf("  token counts agree (%zu)\n", n_ours);
  return 0;
}
