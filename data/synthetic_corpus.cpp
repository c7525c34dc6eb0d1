#include "data/synthetic_corpus.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/random.hpp"
#include "data/synthetic_words.hpp"
#include "io/options.hpp"

namespace gaugelab::data {

namespace {

namespace w = synthetic_words;
using core::Rng;

using core::splitmix64;

// Uniform integer in [lo, hi] (inclusive), portable (no std::uniform_int_distribution).
int uniform_int(Rng& rng, int lo, int hi) {
  return lo + static_cast<int>(core::uniform01(rng) * static_cast<double>(hi - lo + 1));
}

template <class T>
const T& pick(Rng& rng, std::span<const T> items) {
  return items[static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(items.size()) - 1))];
}

// k distinct indices into [0, n), in random order (partial Fisher–Yates).
std::vector<std::size_t> distinct(Rng& rng, std::size_t n, std::size_t k) {
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  for (std::size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + static_cast<std::size_t>(uniform_int(rng, 0, static_cast<int>(n - i) - 1))]);
  idx.resize(k);
  return idx;
}

std::string article(std::string_view next_word, bool capital) {
  const bool vowel = !next_word.empty() && std::string_view("aeiou").find(next_word[0]) != std::string_view::npos;
  return std::string(capital ? (vowel ? "An" : "A") : (vowel ? "an" : "a"));
}

std::string reference_episode(const SyntheticCorpusOptions& o, Rng& rng) {
  const auto k = static_cast<std::size_t>(uniform_int(rng, o.min_entities, o.max_entities));
  const auto who = distinct(rng, w::names().size(), k);
  const auto col = distinct(rng, w::colours().size(), k);
  const auto obj = distinct(rng, w::objects().size(), k);
  static constexpr std::string_view kVerbs[] = {"has", "owns", "carries"};
  std::string s;
  for (std::size_t i = 0; i < k; ++i) {
    const std::string_view c = w::colours()[col[i]];
    s += std::string(w::names()[who[i]]) + " " + std::string(kVerbs[uniform_int(rng, 0, 2)]) + " " + article(c, false) +
         " " + std::string(c) + " " + std::string(w::objects()[obj[i]]) + ". ";
  }
  for (int f = uniform_int(rng, 0, o.max_fillers); f > 0; --f) s += std::string(pick(rng, w::fillers())) + " ";
  const auto n_questions = static_cast<std::size_t>(uniform_int(rng, 1, static_cast<int>(k)));
  for (std::size_t q : distinct(rng, k, n_questions)) {
    const std::string n(w::names()[who[q]]), c(w::colours()[col[q]]), b(w::objects()[obj[q]]);
    switch (uniform_int(rng, 0, 2)) {
      case 0: s += "What colour is " + n + "'s " + b + "? It is " + c + ". "; break;
      case 1: s += "Who has the " + c + " " + b + "? " + n + " does. "; break;
      default: s += "What does " + n + " have? " + article(c, true) + " " + c + " " + b + ". "; break;
    }
  }
  s.pop_back();
  return s;
}

std::string copy_episode(const SyntheticCorpusOptions& o, Rng& rng) {
  const auto n = static_cast<std::size_t>(uniform_int(rng, o.min_copy_words, o.max_copy_words));
  std::string list;
  for (std::size_t i : distinct(rng, w::list_words().size(), n)) {
    if (!list.empty()) list += ' ';
    list += w::list_words()[i];
  }
  static constexpr std::string_view kIntro[][2] = {{"Here is a list: ", "Repeat the list: "},
                                                   {"Remember these words: ", "Say them again: "},
                                                   {"Read this: ", "Once more: "}};
  const auto& t = kIntro[uniform_int(rng, 0, 2)];
  return std::string(t[0]) + list + ". " + std::string(t[1]) + list + ".";
}

std::string agreement_episode(Rng& rng) {
  std::string s;
  for (int m = uniform_int(rng, 2, 3); m > 0; --m) {
    const auto pair = distinct(rng, w::agreement_nouns().size(), 2);
    const w::NounForms& head = w::agreement_nouns()[pair[0]];
    const w::NounForms& other = w::agreement_nouns()[pair[1]];
    const bool plural = uniform_int(rng, 0, 1) == 1;
    const bool other_plural = core::uniform01(rng) < 0.75 ? !plural : plural;  // mostly a misleading distractor
    const std::string h(plural ? head.plural : head.singular), d(other_plural ? other.plural : other.singular);
    const std::string adj(pick(rng, w::adjectives()));
    switch (uniform_int(rng, 0, 2)) {
      case 0:
        s += "The " + h + " that the " + d + " " + std::string(pick(rng, w::past_verbs())) + (plural ? " are " : " is ") + adj + ". ";
        break;
      case 1:
        s += "The " + h + " " + std::string(pick(rng, w::prepositions())) + " the " + d + (plural ? " are " : " is ") + adj + ". ";
        break;
      default:
        s += "The " + h + " that the " + d + " " + std::string(pick(rng, w::past_verbs())) + " near the " +
             std::string(pick(rng, w::places())) + (plural ? " were " : " was ") + adj + ". ";
        break;
    }
  }
  s.pop_back();
  return s;
}

std::string brackets_episode(const SyntheticCorpusOptions& o, Rng& rng) {
  static constexpr char kOpen[] = "([{<", kClose[] = ")]}>";
  const int pairs = uniform_int(rng, 1, o.max_bracket_pairs);
  std::string s = "Brackets:";
  std::vector<int> stack;
  int opened = 0;
  while (opened < pairs || !stack.empty()) {
    const bool can_open = opened < pairs && static_cast<int>(stack.size()) < o.max_bracket_depth;
    if (can_open && (stack.empty() || uniform_int(rng, 0, 1) == 1)) {
      stack.push_back(uniform_int(rng, 0, 3));
      s += ' ', s += kOpen[stack.back()];
      ++opened;
    } else {
      s += ' ', s += kClose[stack.back()];
      stack.pop_back();
    }
  }
  const int stars = uniform_int(rng, 1, static_cast<int>(w::number_words().size()));
  s += " . Stars:";
  for (int i = 0; i < stars; ++i) s += " *";
  s += " . That makes " + std::string(w::number_words()[static_cast<std::size_t>(stars - 1)]) + ".";
  return s;
}

}  // namespace

void SyntheticCorpusOptions::validate() const {
  using io::UsageError;
  if (n_docs == 0) throw UsageError("synthetic: n_docs must be >= 1");
  if (n_docs > kMaxSyntheticDocs)
    throw UsageError("synthetic: --docs " + std::to_string(n_docs) + " exceeds the limit of " +
                     std::to_string(kMaxSyntheticDocs) + " documents (about 1.9e9 tokens)");
  if (min_episodes < 1 || max_episodes < min_episodes)
    throw UsageError("synthetic: need 1 <= min_episodes <= max_episodes");
  for (double wgt : {weight_reference, weight_copy, weight_agreement, weight_brackets})
    if (!(wgt >= 0.0) || !std::isfinite(wgt)) throw UsageError("synthetic: episode weights must be finite and >= 0");
  if (weight_reference + weight_copy + weight_agreement + weight_brackets <= 0.0)
    throw UsageError("synthetic: at least one episode weight must be > 0");
  if (min_entities < 1 || max_entities < min_entities || max_entities > 8)
    throw UsageError("synthetic: need 1 <= min_entities <= max_entities <= 8");
  if (max_fillers < 0) throw UsageError("synthetic: max_fillers must be >= 0");
  if (min_copy_words < 1 || max_copy_words < min_copy_words ||
      static_cast<std::size_t>(max_copy_words) > w::list_words().size())
    throw UsageError("synthetic: need 1 <= min_copy_words <= max_copy_words <= " +
                     std::to_string(w::list_words().size()));
  if (max_bracket_pairs < 1) throw UsageError("synthetic: max_bracket_pairs must be >= 1");
  if (max_bracket_depth < 1) throw UsageError("synthetic: max_bracket_depth must be >= 1");
}

nlohmann::json SyntheticCorpusOptions::to_json() const {
  return {{"seed", seed},
          {"n_docs", n_docs},
          {"min_episodes", min_episodes},
          {"max_episodes", max_episodes},
          {"weight_reference", weight_reference},
          {"weight_copy", weight_copy},
          {"weight_agreement", weight_agreement},
          {"weight_brackets", weight_brackets},
          {"min_entities", min_entities},
          {"max_entities", max_entities},
          {"max_fillers", max_fillers},
          {"min_copy_words", min_copy_words},
          {"max_copy_words", max_copy_words},
          {"max_bracket_pairs", max_bracket_pairs},
          {"max_bracket_depth", max_bracket_depth}};
}

std::string synthetic_document(const SyntheticCorpusOptions& o, std::size_t index) {
  Rng rng(splitmix64(splitmix64(o.seed) ^ static_cast<std::uint64_t>(index)));
  const double weights[4] = {o.weight_reference, o.weight_copy, o.weight_agreement, o.weight_brackets};
  const double total = weights[0] + weights[1] + weights[2] + weights[3];
  std::string doc;
  for (int e = uniform_int(rng, o.min_episodes, o.max_episodes); e > 0; --e) {
    // The first kind whose cumulative weight exceeds u; the last positive-weight kind if rounding
    // carries u past them all.
    const double u = core::uniform01(rng) * total;
    int kind = -1, last_positive = 0;
    double cumulative = 0.0;
    for (int k = 0; k < 4; ++k) {
      if (weights[k] <= 0.0) continue;
      last_positive = k;
      cumulative += weights[k];
      if (kind < 0 && u < cumulative) kind = k;
    }
    if (kind < 0) kind = last_positive;
    switch (kind) {
      case 0: doc += reference_episode(o, rng); break;
      case 1: doc += copy_episode(o, rng); break;
      case 2: doc += agreement_episode(rng); break;
      default: doc += brackets_episode(o, rng); break;
    }
    doc += '\n';
  }
  return doc;
}

std::vector<std::string> synthetic_corpus(const SyntheticCorpusOptions& o) {
  o.validate();
  std::vector<std::string> docs(o.n_docs);
  for (std::size_t i = 0; i < o.n_docs; ++i) docs[i] = synthetic_document(o, i);
  return docs;
}

}  // namespace gaugelab::data
