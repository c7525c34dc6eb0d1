// The original GPT-2 release files: encoder.json + vocab.bpe (reading and writing).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "data/bpe_vocab.hpp"
#include "data/sha256.hpp"

namespace gaugelab::data {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (missing or unreadable)");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": read error");
  return ss.str();
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Inverse of the byte table: code point (< 0x144) -> byte, -1 if not in the alphabet.
std::vector<int> unicode_to_byte() {
  std::vector<int> inv(0x144, -1);
  const auto& fwd = gpt2_byte_to_unicode();
  for (int b = 0; b < 256; ++b) inv[fwd[b]] = b;
  return inv;
}

// Decodes a token string of the byte alphabet into bytes; returns an error text or "".
std::string decode_alphabet(std::string_view s, const std::vector<int>& inv, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    char32_t cp;
    if (c < 0x80) {
      cp = c, i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
      cp = (char32_t(c & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F), i += 2;
    } else {
      return "a character outside GPT-2's byte alphabet in '" + std::string(s) + "'";
    }
    if (cp >= inv.size() || inv[cp] < 0) return "a character outside GPT-2's byte alphabet in '" + std::string(s) + "'";
    out += static_cast<char>(inv[cp]);
  }
  if (out.empty()) return "an empty token";
  return "";
}

std::string encode_alphabet(std::string_view bytes) {
  std::string out;
  const auto& fwd = gpt2_byte_to_unicode();
  for (char c : bytes) append_utf8(out, fwd[static_cast<unsigned char>(c)]);
  return out;
}

// JSON string literal as Python's json.dumps writes it (ensure_ascii: \uXXXX for non-ASCII).
std::string python_json_string(std::string_view utf8) {
  std::string out = "\"";
  for (std::size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    char32_t cp;
    if (c < 0x80) cp = c, i += 1;
    else if ((c & 0xE0) == 0xC0) cp = (char32_t(c & 0x1F) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3F), i += 2;
    else cp = (char32_t(c & 0x0F) << 12) | (char32_t(static_cast<unsigned char>(utf8[i + 1]) & 0x3F) << 6) |
              (static_cast<unsigned char>(utf8[i + 2]) & 0x3F), i += 3;
    if (cp == '"') out += "\\\"";
    else if (cp == '\\') out += "\\\\";
    else if (cp >= 0x20 && cp < 0x7F) out += static_cast<char>(cp);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out + "\"";
}

std::size_t line_of_byte(const std::string& text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'));
}

// Splits `bytes` into the parts BPE reaches using only ranks below `max_rank`.
std::vector<std::string_view> merge_below(const RankTable& ranks, std::string_view bytes, TokenId max_rank) {
  std::vector<std::string_view> parts;
  for (std::size_t i = 0; i < bytes.size(); ++i) parts.push_back(bytes.substr(i, 1));
  while (parts.size() > 1) {
    std::size_t best = 0;
    TokenId best_rank = RankTable::npos;
    for (std::size_t j = 0; j + 1 < parts.size(); ++j) {
      const std::string_view pair(parts[j].data(), parts[j].size() + parts[j + 1].size());
      const TokenId r = ranks.find(pair);
      if (r < max_rank && r < best_rank) best_rank = r, best = j;
    }
    if (best_rank == RankTable::npos) break;
    parts[best] = std::string_view(parts[best].data(), parts[best].size() + parts[best + 1].size());
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return parts;
}

}  // namespace

const std::array<char32_t, 256>& gpt2_byte_to_unicode() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

BpeVocab load_gpt2_vocab_dir(const std::string& dir) {
  const std::string enc_path = (fs::path(dir) / "encoder.json").string();
  const std::string bpe_path = (fs::path(dir) / "vocab.bpe").string();
  const std::string bpe_text = read_file(bpe_path);
  const std::string enc_text = read_file(enc_path);
  const std::vector<int> inv = unicode_to_byte();
  const auto& fwd = gpt2_byte_to_unicode();

  BpeVocab v;
  v.ranks.reserve(50257);
  // Single bytes first, in the alphabet's order: printable bytes, then the remapped ones.
  std::vector<int> order;
  for (int b = 0; b < 256; ++b)
    if (fwd[b] == static_cast<char32_t>(b)) order.push_back(b);
  for (int b = 0; b < 256; ++b)
    if (fwd[b] != static_cast<char32_t>(b)) order.push_back(b);
  for (int b : order) {
    const char c = static_cast<char>(b);
    v.ranks.push(std::string_view(&c, 1));
  }
  // Merges, one rank each, in file order.
  std::vector<std::size_t> merge_line;  // rank - 256 -> line number in vocab.bpe
  std::size_t line_no = 0, pos = 0;
  std::string left, right;
  while (pos < bpe_text.size()) {
    std::size_t eol = bpe_text.find('\n', pos);
    if (eol == std::string::npos) eol = bpe_text.size();
    std::string_view line(bpe_text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.rfind("#version", 0) == 0) continue;
    if (line.empty()) continue;
    const std::size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos)
      throw std::runtime_error(bpe_path + ":" + std::to_string(line_no) + ": expected a merge 'A B' (two tokens, one space)");
    std::string err = decode_alphabet(line.substr(0, sp), inv, left);
    if (err.empty()) err = decode_alphabet(line.substr(sp + 1), inv, right);
    if (!err.empty()) throw std::runtime_error(bpe_path + ":" + std::to_string(line_no) + ": " + err);
    if (v.ranks.find(left) == RankTable::npos || v.ranks.find(right) == RankTable::npos)
      throw std::runtime_error(bpe_path + ":" + std::to_string(line_no) + ": merges a part that no earlier line created");
    const TokenId dup = v.ranks.push(left + right);
    if (dup != RankTable::npos)
      throw std::runtime_error(bpe_path + ":" + std::to_string(line_no) + ": merge result repeats token " +
                               std::to_string(dup));
    merge_line.push_back(line_no);
  }

  nlohmann::json enc;
  try {
    enc = nlohmann::json::parse(enc_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(enc_path + ":" + std::to_string(line_of_byte(enc_text, e.byte)) + ": bad JSON (" +
                             e.what() + ")");
  } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range (1e999)
    throw std::runtime_error(enc_path + ": bad JSON (" + e.what() + ")");
  }
  if (!enc.is_object()) throw std::runtime_error(enc_path + ":1: expected a JSON object of token -> id");
  std::string bytes;
  bool have_eot = false;
  std::size_t n_plain = 0;
  for (auto it = enc.begin(); it != enc.end(); ++it) {
    const std::string& key = it.key();
    if (!it.value().is_number_unsigned())
      throw std::runtime_error(enc_path + ":1: id of '" + key + "' is not a non-negative integer");
    const auto id = it.value().get<std::uint64_t>();
    if (key == kEndOfText) {
      v.eot = static_cast<TokenId>(id);
      have_eot = true;
      continue;
    }
    if (key == "<|startoftext|>") continue;  // present in some copies; never produced by GPT-2
    const std::string err = decode_alphabet(key, inv, bytes);
    if (!err.empty()) throw std::runtime_error(enc_path + ":1: " + err);
    const TokenId rank = v.ranks.find(bytes);
    if (rank != id) {
      const std::string where = rank == RankTable::npos ? "no merge in vocab.bpe creates it"
                                : rank < 256 ? "it is byte rank " + std::to_string(rank)
                                             : "vocab.bpe line " + std::to_string(merge_line[rank - 256]) +
                                                   " gives rank " + std::to_string(rank);
      throw std::runtime_error(enc_path + ":1: token '" + key + "' has id " + std::to_string(id) + " but " + where);
    }
    ++n_plain;
  }
  if (n_plain != v.ranks.size())
    throw std::runtime_error(enc_path + ":1: holds " + std::to_string(n_plain) + " tokens but vocab.bpe defines " +
                             std::to_string(v.ranks.size()));
  if (!have_eot) throw std::runtime_error(enc_path + ":1: no \"<|endoftext|>\" entry");
  if (v.eot < v.ranks.size())
    throw std::runtime_error(enc_path + ":1: <|endoftext|> id " + std::to_string(v.eot) + " collides with a BPE token");
  v.source = dir;
  v.sha256 = "encoder.json:" + sha256_hex(enc_text) + " vocab.bpe:" + sha256_hex(bpe_text);
  return v;
}

void write_gpt2_vocab_dir(const BpeVocab& v, const std::string& dir) {
  const auto& fwd = gpt2_byte_to_unicode();
  std::vector<int> order;
  for (int b = 0; b < 256; ++b)
    if (fwd[b] == static_cast<char32_t>(b)) order.push_back(b);
  for (int b = 0; b < 256; ++b)
    if (fwd[b] != static_cast<char32_t>(b)) order.push_back(b);
  if (v.ranks.size() < 256) throw std::runtime_error("vocab: fewer than 256 tokens, cannot be written as merges");
  for (TokenId r = 0; r < 256; ++r) {
    const std::string_view t = v.ranks.bytes_of(r);
    if (t.size() != 1 || static_cast<unsigned char>(t[0]) != order[r])
      throw std::runtime_error("vocab: rank " + std::to_string(r) + " is not the single byte GPT-2's files put there");
  }
  std::string bpe = "#version: 0.2\n";
  for (TokenId r = 256; r < v.ranks.size(); ++r) {
    const auto parts = merge_below(v.ranks, v.ranks.bytes_of(r), r);
    if (parts.size() != 2)
      throw std::runtime_error("vocab: token " + std::to_string(r) + " is not a merge of two lower-ranked tokens");
    bpe += encode_alphabet(parts[0]) + " " + encode_alphabet(parts[1]) + "\n";
  }
  // Python json.dumps layout: {"k": v, "k": v}, ids in rank order, <|endoftext|> last.
  std::string enc = "{";
  for (TokenId r = 0; r < v.ranks.size(); ++r) {
    if (r) enc += ", ";
    enc += python_json_string(encode_alphabet(v.ranks.bytes_of(r))) + ": " + std::to_string(r);
  }
  enc += std::string(v.ranks.size() ? ", " : "") + "\"" + kEndOfText + "\": " + std::to_string(v.eot) + "}";

  fs::create_directories(dir);
  for (const auto& [name, text] : {std::pair<std::string, const std::string*>{"encoder.json", &enc},
                                   std::pair<std::string, const std::string*>{"vocab.bpe", &bpe}}) {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text->data(), static_cast<std::streamsize>(text->size()));
    out.close();
    if (!out) throw std::runtime_error(path + ": write failed");
  }
}

}  // namespace gaugelab::data
