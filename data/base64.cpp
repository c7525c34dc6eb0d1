#include "data/base64.hpp"

#include <array>
#include <cstdint>

namespace gaugelab::data {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> make_table() {
  std::array<int, 256> t{};
  for (int& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = i;
  return t;
}
constexpr std::array<int, 256> kValue = make_table();
}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=') {
        if (!last || k < 2) return std::nullopt;
        v[k] = 0;
        ++pad;
      } else {
        if (pad > 0) return std::nullopt;  // data after padding
        v[k] = kValue[static_cast<unsigned char>(c)];
        if (v[k] < 0) return std::nullopt;
      }
    }
    const std::uint32_t w = (std::uint32_t(v[0]) << 18) | (std::uint32_t(v[1]) << 12) | (std::uint32_t(v[2]) << 6) |
                            std::uint32_t(v[3]);
    if ((pad == 1 && (w & 0xFFu)) || (pad == 2 && (w & 0xFFFFu))) return std::nullopt;  // non-canonical bits
    out.push_back(static_cast<char>(w >> 16));
    if (pad < 2) out.push_back(static_cast<char>((w >> 8) & 0xFFu));
    if (pad < 1) out.push_back(static_cast<char>(w & 0xFFu));
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t k = bytes.size() - i;
    std::uint32_t w = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16;
    if (k > 1) w |= std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (k > 2) w |= std::uint32_t(static_cast<unsigned char>(bytes[i + 2]));
    out.push_back(kAlphabet[(w >> 18) & 63]);
    out.push_back(kAlphabet[(w >> 12) & 63]);
    out.push_back(k > 1 ? kAlphabet[(w >> 6) & 63] : '=');
    out.push_back(k > 2 ? kAlphabet[w & 63] : '=');
  }
  return out;
}

}  // namespace gaugelab::data
