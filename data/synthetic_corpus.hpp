// A built-in synthetic corpus whose next-token prediction needs attention.
//
// Every document is a few "episodes", each a pattern that can only be completed by looking back:
//  * reference:  entities are introduced with attributes, and questions about them come later
//                ("Alice has a red box. ... What colour is Alice's box? It is red.");
//  * copy:       a random word list, then the same list again (induction heads);
//  * agreement:  the verb agrees with a subject separated from it by a clause or a phrase
//                ("The dog that the girls saw is hungry.");
//  * brackets:   a nested bracket sequence (closing needs the matching opener) and a run of stars
//                followed by its count.
// Words come from a small closed English vocabulary (synthetic_words.hpp), so GPT-2's tokenizer gives
// ordinary whole-word tokens. Document `i` depends only on (seed, i): the corpus is deterministic,
// can be generated in any order or in parallel, and a longer corpus extends a shorter one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gaugelab::data {

/// The most documents one corpus holds: about 1.9e9 GPT-2 tokens (3.8 GB of token files, ~12 minutes to
/// prepare on one core). --docs 1e12 once wrote on until the disk filled.
inline constexpr std::size_t kMaxSyntheticDocs = 10'000'000;

struct SyntheticCorpusOptions {
  std::uint64_t seed = 0;         // every draw derives from (seed, document index)
  std::size_t n_docs = 10000;     // documents (about 250 GPT-2 tokens each with the defaults)
  int min_episodes = 4;           // episodes per document, uniform in [min_episodes, max_episodes]
  int max_episodes = 8;
  double weight_reference = 1.0;  // relative frequency of each episode kind (>= 0, not all 0)
  double weight_copy = 1.0;
  double weight_agreement = 1.0;
  double weight_brackets = 1.0;
  int min_entities = 2;           // entities per reference episode, uniform in [min, max] (max <= 8)
  int max_entities = 4;
  int max_fillers = 2;            // answer-free sentences between introductions and questions, 0..max
  int min_copy_words = 4;         // copy-list length, uniform in [min, max]
  int max_copy_words = 10;
  int max_bracket_pairs = 10;     // bracket pairs per sequence, uniform in [1, max]
  int max_bracket_depth = 4;      // nesting depth never exceeds this

  /// Throws io::UsageError naming the offending field.
  void validate() const;
  nlohmann::json to_json() const;
};

/// Document `index` of the corpus (ends with a newline).
std::string synthetic_document(const SyntheticCorpusOptions& options, std::size_t index);
/// Documents 0 .. n_docs-1.
std::vector<std::string> synthetic_corpus(const SyntheticCorpusOptions& options);

}  // namespace gaugelab::data
