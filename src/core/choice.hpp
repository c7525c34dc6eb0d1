// A setting with a fixed set of values, as one table: each row the word the command line, config files and
// logs spell and the enum value the code compares. The word is parsed once (where the option is declared) and
// written back from the same row, so a choice is never compared as a string and never listed twice: the
// option's help ("one of: ..."), its error message and its recorded value all read the table.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gaugelab::core {

/// One row of a choice table: the word and the value it stands for.
template <class E>
struct Choice {
  const char* name;
  E value;
};

template <class E>
using ChoiceTable = std::vector<Choice<E>>;

/// The words of `table`, in its order.
template <class E>
std::vector<std::string> choice_words(const ChoiceTable<E>& table) {
  std::vector<std::string> out;
  out.reserve(table.size());
  for (const Choice<E>& c : table) out.emplace_back(c.name);
  return out;
}

/// The words joined as "a, b, c".
template <class E>
std::string choice_list(const ChoiceTable<E>& table) {
  std::string s;
  for (const Choice<E>& c : table) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

/// The word of `value`; "?" for a value the table does not hold (a table missing a row).
template <class E>
const char* choice_name(const ChoiceTable<E>& table, E value) {
  for (const Choice<E>& c : table)
    if (c.value == value) return c.name;
  return "?";
}

/// The row index of `word`, or table.size() when there is none.
template <class E>
std::size_t choice_index(const ChoiceTable<E>& table, std::string_view word) {
  for (std::size_t i = 0; i < table.size(); ++i)
    if (word == table[i].name) return i;
  return table.size();
}

/// The value of `word`; throws std::invalid_argument "WHAT must be one of a, b, got 'x'" otherwise.
template <class E>
E parse_choice(const ChoiceTable<E>& table, std::string_view word, const std::string& what) {
  const std::size_t i = choice_index(table, word);
  if (i == table.size())
    throw std::invalid_argument(what + " must be one of " + choice_list(table) + ", got '" + std::string(word) + "'");
  return table[i].value;
}

}  // namespace gaugelab::core
