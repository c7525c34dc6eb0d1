// Standard base64 (RFC 4648 alphabet, '=' padding), as used by `.tiktoken` rank files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gaugelab::data {

/// Decoded bytes, or nullopt if `text` is not canonical padded base64 (bad character, bad length,
/// misplaced padding, or non-zero bits after the last byte).
std::optional<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);

}  // namespace gaugelab::data
