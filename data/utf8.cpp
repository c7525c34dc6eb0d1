#include "data/utf8.hpp"

#include <cstdint>
#include <cstring>

namespace gaugelab::data {

namespace {
inline bool is_cont(unsigned char c) { return (c & 0xC0u) == 0x80u; }
}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  const std::size_t left = s.size() - i;
  const unsigned char c = p[0];
  if (c < 0x80u) return 1;
  if (c < 0xC2u) return 0;  // stray continuation byte, or an overlong 2-byte lead (C0, C1)
  if (c < 0xE0u) return (left >= 2 && is_cont(p[1])) ? 2 : 0;
  if (c < 0xF0u) {
    if (left < 3 || !is_cont(p[1]) || !is_cont(p[2])) return 0;
    if (c == 0xE0u && p[1] < 0xA0u) return 0;  // overlong
    if (c == 0xEDu && p[1] >= 0xA0u) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c < 0xF5u) {
    if (left < 4 || !is_cont(p[1]) || !is_cont(p[2]) || !is_cont(p[3])) return 0;
    if (c == 0xF0u && p[1] < 0x90u) return 0;  // overlong
    if (c == 0xF4u && p[1] >= 0x90u) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;  // F5..FF never occur in UTF-8
}

std::size_t utf8_valid_prefix(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    // ASCII fast path, eight bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

}  // namespace gaugelab::data
