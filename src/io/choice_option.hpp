// A choice option bound to an enum field (core/choice.hpp): the table is the one list of its words and values.
// --help's "one of: ...", the error naming the words and the recorded word read the table; the code reads the enum.
//
// While a command line or config file is read, the option holds the word as text (so the mode rules, the
// implications and the recorded settings see it as given); the option's check, run by validate() (which parse()
// calls) once the word has passed the table's words, sets the enum. Declared on a struct whose enum is already set
// (the defaults, or settings filled in code), the option starts at that value's word.
#pragma once

#include <memory>
#include <string>

#include "core/choice.hpp"
#include "io/options.hpp"

namespace gaugelab::io {

template <class E>
Options& add_choice(Options& opts, const std::string& name, E* field, const std::string& help,
                    const core::ChoiceTable<E>& table) {
  auto text = std::make_shared<std::string>(core::choice_name(table, *field));
  opts.add(name, text.get(), help, core::choice_words(table));
  opts.check([text, field, &table] {  // after the word check registered by add(): the word is one of the table's
    const std::size_t i = core::choice_index(table, *text);
    if (i < table.size()) *field = table[i].value;
  });
  return opts;
}

}  // namespace gaugelab::io
