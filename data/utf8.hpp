// UTF-8 well-formedness, as the tokenizer needs it.
//
// A byte is "invalid" when it is not part of a well-formed UTF-8 sequence (RFC 3629: no overlong
// forms, no encoded surrogates U+D800..U+DFFF, nothing above U+10FFFF). The scan is greedy from the
// left: at each position either a well-formed sequence starts there and is consumed whole, or the
// byte at that position is invalid and the scan moves on by one byte. This marks exactly the bytes
// Python's decoder escapes with errors="surrogateescape".
#pragma once

#include <cstddef>
#include <string_view>

namespace gaugelab::data {

/// Length (1..4) of the well-formed sequence starting at `s[i]`, or 0 if the byte there is invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

/// Number of leading bytes of `s` that form well-formed UTF-8 (== s.size() when all of it does).
std::size_t utf8_valid_prefix(std::string_view s);

}  // namespace gaugelab::data
