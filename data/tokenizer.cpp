#include "data/tokenizer.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gaugelab::data {

namespace {
// Pieces longer than this are not cached: they are rare, and caching them would let one huge
// input (a long run of digits or of invalid bytes) fill memory.
constexpr std::size_t kCacheMaxPieceBytes = 128;
}  // namespace

EncodeScratch::EncodeScratch(std::size_t entries) : cache_entries(entries) {}

Gpt2Tokenizer::Gpt2Tokenizer(BpeVocab vocab)
    : vocab_(std::make_shared<const BpeVocab>(std::move(vocab))), pre_(std::make_shared<const Gpt2PreTokenizer>()) {
  const std::string_view eot_text(kEndOfText);
  if (vocab_->ranks.find(eot_text) != RankTable::npos)
    throw std::runtime_error(vocab_->source + ": \"<|endoftext|>\" is an ordinary token; it must be special only");
}

Gpt2Tokenizer Gpt2Tokenizer::from_tiktoken(const std::string& path) { return Gpt2Tokenizer(load_tiktoken_ranks(path)); }

Gpt2Tokenizer Gpt2Tokenizer::from_vocab_dir(const std::string& dir) { return Gpt2Tokenizer(load_gpt2_vocab_dir(dir)); }

std::string Gpt2Tokenizer::default_ranks_path() {
  namespace fs = std::filesystem;
  if (const char* a = std::getenv("GAUGELAB_ASSETS"); a && *a) return (fs::path(a) / "gpt2.tiktoken").string();
  if (const char* c = std::getenv("GAUGELAB_CACHE"); c && *c) return (fs::path(c) / "assets" / "gpt2.tiktoken").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "gaugelab" / "assets" / "gpt2.tiktoken").string();
}

void Gpt2Tokenizer::encode_ordinary_into(std::string_view text, std::vector<TokenId>& out, EncodeScratch& s) const {
  const RankTable& ranks = vocab_->ranks;
  pre_->for_each_piece(text, s.pre, [&](std::size_t b, std::size_t e) {
    const std::string_view piece = text.substr(b, e - b);
    if (const TokenId r = ranks.find(piece); r != RankTable::npos) {
      out.push_back(r);  // most pieces of ordinary text are one token
      return;
    }
    const bool cacheable = s.cache_entries > 0 && piece.size() <= kCacheMaxPieceBytes;
    if (cacheable) {
      if (auto it = s.cache.find(piece); it != s.cache.end()) {
        out.insert(out.end(), s.cached.begin() + it->second.offset,
                   s.cached.begin() + it->second.offset + it->second.count);
        return;
      }
    }
    const std::size_t before = out.size();
    bpe_merge(ranks, piece, out, s.bpe);
    if (cacheable) {
      if (s.cache.size() >= s.cache_entries) s.cache.clear(), s.cached.clear();
      const auto offset = static_cast<std::uint32_t>(s.cached.size());
      s.cached.insert(s.cached.end(), out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
      s.cache.emplace(std::string(piece), EncodeScratch::Span{offset, static_cast<std::uint32_t>(out.size() - before)});
    }
  });
}

void Gpt2Tokenizer::encode_into(std::string_view text, SpecialTokens special, std::vector<TokenId>& out,
                                EncodeScratch& s) const {
  const std::string_view eot_text(kEndOfText);
  if (special == SpecialTokens::as_text) return encode_ordinary_into(text, out, s);
  std::size_t start = 0;
  for (std::size_t hit = text.find(eot_text); hit != std::string_view::npos; hit = text.find(eot_text, start)) {
    if (special == SpecialTokens::rejected)
      throw std::runtime_error("text contains the special token <|endoftext|> at byte " + std::to_string(hit) +
                               " (encode with special tokens allowed, or as plain text)");
    encode_ordinary_into(text.substr(start, hit - start), out, s);
    out.push_back(vocab_->eot);
    start = hit + eot_text.size();
  }
  encode_ordinary_into(text.substr(start), out, s);
}

std::vector<TokenId> Gpt2Tokenizer::encode(std::string_view text, SpecialTokens special) const {
  EncodeScratch scratch;
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  encode_into(text, special, out, scratch);
  return out;
}

std::vector<TokenId> Gpt2Tokenizer::encode_ordinary(std::string_view text) const {
  return encode(text, SpecialTokens::as_text);
}

std::string_view Gpt2Tokenizer::token_bytes(TokenId id) const {
  if (id < vocab_->ranks.size()) return vocab_->ranks.bytes_of(id);
  if (id == vocab_->eot) return kEndOfText;
  throw std::runtime_error("token id " + std::to_string(id) + " is out of range (vocabulary size " +
                           std::to_string(vocab_size()) + ")");
}

std::string Gpt2Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  out.reserve(ids.size() * 4);
  for (const TokenId id : ids) out.append(token_bytes(id));
  return out;
}

}  // namespace gaugelab::data
