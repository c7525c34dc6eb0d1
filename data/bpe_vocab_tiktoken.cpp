// Loader for `.tiktoken` rank files.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "data/base64.hpp"
#include "data/bpe_vocab.hpp"
#include "data/sha256.hpp"

namespace gaugelab::data {

namespace {

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
}

std::string read_ranks_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the BPE ranks file (missing or unreadable)");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return ss.str();
}

}  // namespace

BpeVocab load_tiktoken_ranks(const std::string& path) {
  const std::string text = read_ranks_file(path);
  struct Entry {
    std::string bytes;
    std::size_t rank, line;
  };
  std::vector<Entry> entries;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos)
      fail(path, line_no, "expected '<base64 token> <rank>' (two fields separated by one space)");
    const std::string_view b64 = line.substr(0, sp), rank_text = line.substr(sp + 1);
    std::optional<std::string> bytes = base64_decode(b64);
    if (!bytes) fail(path, line_no, "bad base64 '" + std::string(b64) + "'");
    if (bytes->empty()) fail(path, line_no, "empty token");
    std::size_t rank = 0;
    const auto [end, ec] = std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (ec != std::errc() || end != rank_text.data() + rank_text.size())
      fail(path, line_no, "bad rank '" + std::string(rank_text) + "' (expected a non-negative integer)");
    entries.push_back({std::move(*bytes), rank, line_no});
  }
  if (entries.empty()) throw std::runtime_error(path + ": no tokens (empty ranks file)");
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  BpeVocab v;
  v.ranks.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.rank != i) {
      if (e.rank < i) fail(path, e.line, "rank " + std::to_string(e.rank) + " appears twice");
      fail(path, e.line, "ranks are not contiguous: rank " + std::to_string(i) + " is missing");
    }
    const TokenId dup = v.ranks.push(e.bytes);
    if (dup != RankTable::npos)
      fail(path, e.line, "token bytes repeat those of rank " + std::to_string(dup));
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    if (v.ranks.find(std::string_view(&c, 1)) == RankTable::npos)
      throw std::runtime_error(path + ": byte " + std::to_string(b) +
                               " is not a token (byte-level BPE needs all 256 single bytes)");
  }
  v.eot = static_cast<TokenId>(v.ranks.size());
  v.source = path;
  v.sha256 = sha256_hex(text);
  return v;
}

}  // namespace gaugelab::data
