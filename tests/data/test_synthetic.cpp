// The synthetic corpus: deterministic from its seed, and every episode's structure is really there
// (answers appear before their questions, copies repeat, brackets balance, counts and agreement hold).
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "data/synthetic_corpus.hpp"
#include "data/synthetic_words.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;

namespace {

// Documents checked by the structure tests: enough for every episode kind to occur many times.
constexpr std::size_t kDocsChecked = 300;

// Calls fn(match) for every match of `re` in `doc`.
template <class F>
int for_each_match(const std::string& doc, const std::regex& re, F&& fn) {
  int n = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), re); it != std::sregex_iterator(); ++it, ++n) fn(*it);
  return n;
}

// True if `sentence` occurs in `doc` before byte offset `before`.
bool appears_before(const std::string& doc, const std::regex& sentence, std::ptrdiff_t before) {
  std::smatch m;
  return std::regex_search(doc.cbegin(), doc.cbegin() + before, m, sentence);
}

}  // namespace

TEST_CASE("synthetic corpus is deterministic in its seed", "[synthetic]") {
  SyntheticCorpusOptions o;
  o.n_docs = 50;
  const auto a = synthetic_corpus(o), b = synthetic_corpus(o);
  CHECK(a == b);
  o.seed = 1;
  const auto c = synthetic_corpus(o);
  int differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != c[i];
  CHECK(differ == 50);
  // Document i depends only on (seed, i): a longer corpus extends a shorter one.
  o.n_docs = 80;
  const auto longer = synthetic_corpus(o);
  CHECK(std::equal(c.begin(), c.end(), longer.begin()));
  CHECK(synthetic_document(o, 63) == longer[63]);
}

TEST_CASE("every question's answer was stated earlier in the document", "[synthetic]") {
  SyntheticCorpusOptions o;
  o.n_docs = kDocsChecked;
  const std::regex colour_q(R"(What colour is (\w+)'s (\w+)\? It is (\w+)\.)");
  const std::regex who_q(R"(Who has the (\w+) (\w+)\? (\w+) does\.)");
  const std::regex what_q(R"(What does (\w+) have\? An? (\w+) (\w+)\.)");
  int questions = 0;
  for (const std::string& doc : synthetic_corpus(o)) {
    auto stated = [&](const std::string& name, const std::string& colour, const std::string& object) {
      return std::regex(name + " (has|owns|carries) an? " + colour + " " + object + "\\.");
    };
    questions += for_each_match(doc, colour_q, [&](const std::smatch& m) {
      REQUIRE(appears_before(doc, stated(m[1], m[3], m[2]), m.position(0)));
    });
    questions += for_each_match(doc, who_q, [&](const std::smatch& m) {
      REQUIRE(appears_before(doc, stated(m[3], m[1], m[2]), m.position(0)));
    });
    questions += for_each_match(doc, what_q, [&](const std::smatch& m) {
      REQUIRE(appears_before(doc, stated(m[1], m[2], m[3]), m.position(0)));
    });
  }
  CHECK(questions > 200);
}

TEST_CASE("copy episodes repeat their list exactly", "[synthetic]") {
  SyntheticCorpusOptions o;
  o.n_docs = kDocsChecked;
  const std::regex copy(R"((Here is a list|Remember these words|Read this): ([a-z ]+)\. (Repeat the list|Say them again|Once more): ([a-z ]+)\.)");
  int n = 0;
  for (const std::string& doc : synthetic_corpus(o))
    n += for_each_match(doc, copy, [&](const std::smatch& m) {
      REQUIRE(m[2] == m[4]);
      const auto words = std::count(m[2].first, m[2].second, ' ') + 1;
      REQUIRE(words >= o.min_copy_words);
      REQUIRE(words <= o.max_copy_words);
    });
  CHECK(n > 200);
}

TEST_CASE("brackets balance within the depth limit and star counts are right", "[synthetic]") {
  SyntheticCorpusOptions o;
  o.n_docs = kDocsChecked;
  const std::regex brackets(R"(Brackets:((?: [()\[\]{}<>])+) \.)");
  const std::regex stars(R"(Stars:((?: \*)+) \. That makes (\w+)\.)");
  const auto numbers = synthetic_words::number_words();
  int n_brackets = 0, n_stars = 0;
  for (const std::string& doc : synthetic_corpus(o)) {
    n_brackets += for_each_match(doc, brackets, [&](const std::smatch& m) {
      std::string stack;
      for (char c : m[1].str()) {
        if (c == ' ') continue;
        const auto open = std::string("([{<").find(c);
        if (open != std::string::npos) {
          stack += c;
          REQUIRE(static_cast<int>(stack.size()) <= o.max_bracket_depth);
        } else {
          REQUIRE(!stack.empty());
          REQUIRE(std::string("([{<").find(stack.back()) == std::string(")]}>").find(c));
          stack.pop_back();
        }
      }
      REQUIRE(stack.empty());
    });
    n_stars += for_each_match(doc, stars, [&](const std::smatch& m) {
      const auto count = std::count(m[1].first, m[1].second, '*');
      REQUIRE(m[2] == std::string(numbers[static_cast<std::size_t>(count - 1)]));
    });
  }
  CHECK(n_brackets > 150);
  CHECK(n_stars == n_brackets);
}

TEST_CASE("verbs agree with the head noun, not the distractor", "[synthetic]") {
  SyntheticCorpusOptions o;
  o.n_docs = kDocsChecked;
  std::set<std::string> singular, plural;
  for (const auto& f : synthetic_words::agreement_nouns()) singular.emplace(f.singular), plural.emplace(f.plural);
  const std::regex sentence(R"(The (\w+) (?:that the (\w+) \w+(?: near the \w+)?|(?:beside|behind|near|under) the (\w+)) (is|are|was|were) \w+\.)");
  int n = 0, misleading = 0;
  for (const std::string& doc : synthetic_corpus(o))
    n += for_each_match(doc, sentence, [&](const std::smatch& m) {
      const std::string head = m[1], other = m[2].matched ? m[2].str() : m[3].str(), verb = m[4];
      const bool head_plural = plural.count(head) > 0;
      REQUIRE(head_plural != (singular.count(head) > 0));
      REQUIRE(head_plural == (verb == "are" || verb == "were"));
      misleading += (plural.count(other) > 0) != head_plural;
    });
  CHECK(n > 200);
  CHECK(misleading > n / 2);  // the distractor usually has the other number
}

TEST_CASE("synthetic options are validated", "[synthetic]") {
  SyntheticCorpusOptions o;
  CHECK_NOTHROW(o.validate());
  o.max_entities = 9;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("max_entities"));
  o = {};
  o.weight_reference = o.weight_copy = o.weight_agreement = o.weight_brackets = 0.0;
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("weight"));
  o = {};
  o.weight_copy = 0.0;
  o.weight_agreement = 0.0;
  o.weight_brackets = 0.0;
  o.n_docs = 20;
  for (const auto& doc : synthetic_corpus(o)) CHECK(doc.find("Brackets:") == std::string::npos);
}

TEST_CASE("the closed vocabulary gives whole-word GPT-2 tokens", "[synthetic]") {
  const Gpt2Tokenizer* tok = gaugelab::data::testing::tokenizer_or_skip();
  if (!tok) return;
  SyntheticCorpusOptions o;
  o.n_docs = 100;
  std::size_t bytes = 0, tokens = 0;
  for (const auto& doc : synthetic_corpus(o)) bytes += doc.size(), tokens += tok->encode_ordinary(doc).size();
  // English prose runs at about 4 bytes per GPT-2 token; the bracket and star runs (one token per
  // two bytes) pull the mix down, but below 3 would mean words are being split into pieces.
  constexpr double kMinBytesPerToken = 3.0;
  CHECK(static_cast<double>(bytes) / static_cast<double>(tokens) > kMinBytesPerToken);
}

}  // namespace GAUGELAB_TU
