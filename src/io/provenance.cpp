#include "io/provenance.hpp"

#include <unistd.h>

#include <array>
#include <ctime>

namespace gaugelab::io {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string hostname() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0 || buf[0] == '\0') return "unknown";
  return buf.data();
}

std::string shell_quote(const std::string& word) {
  if (word.empty()) return "''";
  const bool plain = word.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
                     std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

}  // namespace gaugelab::io
