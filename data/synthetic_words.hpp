// The closed vocabulary of the synthetic corpus: common English words that GPT-2's tokenizer
// keeps whole (with a leading space), so the corpus is short in tokens and its structure, not its
// spelling, is what a model has to learn.
#pragma once

#include <span>
#include <string_view>

namespace gaugelab::data::synthetic_words {

struct NounForms {
  std::string_view singular, plural;
};

std::span<const std::string_view> names();        // people
std::span<const std::string_view> colours();
std::span<const std::string_view> objects();      // things people have
std::span<const std::string_view> list_words();   // for copy / induction lists
std::span<const std::string_view> fillers();      // sentences that carry no answer
std::span<const NounForms> agreement_nouns();     // heads and distractors of agreement sentences
std::span<const std::string_view> past_verbs();   // "the dog that the girls saw ..."
std::span<const std::string_view> places();
std::span<const std::string_view> prepositions(); // "the keys beside the boxes ..."
std::span<const std::string_view> adjectives();
std::span<const std::string_view> number_words(); // "one" .. "nine"

}  // namespace gaugelab::data::synthetic_words
