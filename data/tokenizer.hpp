// GPT-2 byte-level BPE tokenizer: pre-tokenizer regex (PCRE2) + rank-ordered merges + the
// `<|endoftext|>` special token. It matches tiktoken's "gpt2" encoding token for token on valid
// UTF-8; on invalid UTF-8 it follows the rule documented in pretokenizer.hpp and data/README.md, and
// decode(encode(bytes)) == bytes for every byte string.
//
// The tokenizer is immutable after construction and safe to share between threads; per-thread state
// (regex match data, merge buffers, the cache of recently seen pieces) lives in an EncodeScratch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/bpe_merge.hpp"
#include "data/bpe_vocab.hpp"
#include "data/pretokenizer.hpp"

namespace gaugelab::data {

/// What encode does with the literal text "<|endoftext|>" (tiktoken's allowed_special).
enum class SpecialTokens {
  allowed,   // becomes the single token eot (tiktoken: allowed_special="all")
  as_text,   // encoded as ordinary text, 7 tokens (tiktoken: encode_ordinary)
  rejected,  // throws std::runtime_error naming the byte offset (tiktoken's default)
};

/// Per-thread encoding state. The cache maps pieces that are not single tokens to their tokens.
class EncodeScratch {
 public:
  /// cache_entries: pieces remembered before the cache is cleared (0 disables caching).
  explicit EncodeScratch(std::size_t cache_entries = 1u << 16);

 private:
  friend class Gpt2Tokenizer;
  struct Span {
    std::uint32_t offset, count;  // into `cached`
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return RankTable::hash(s); }
  };
  PreTokenizerScratch pre;
  BpeScratch bpe;
  std::unordered_map<std::string, Span, Hash, std::equal_to<>> cache;
  std::vector<TokenId> cached;
  std::size_t cache_entries;
};

class Gpt2Tokenizer {
 public:
  explicit Gpt2Tokenizer(BpeVocab vocab);
  /// From a `.tiktoken` ranks file (see bpe_vocab.hpp).
  static Gpt2Tokenizer from_tiktoken(const std::string& path);
  /// From DIR/encoder.json + DIR/vocab.bpe.
  static Gpt2Tokenizer from_vocab_dir(const std::string& dir);
  /// $GAUGELAB_ASSETS/gpt2.tiktoken if GAUGELAB_ASSETS is set, else $GAUGELAB_CACHE/assets/...,
  /// else $HOME/.cache/gaugelab/assets/gpt2.tiktoken (where the set-up script puts it).
  static std::string default_ranks_path();

  /// Tokens of `text`; `special` says what the literal "<|endoftext|>" becomes.
  std::vector<TokenId> encode(std::string_view text, SpecialTokens special) const;
  /// encode(text, SpecialTokens::as_text).
  std::vector<TokenId> encode_ordinary(std::string_view text) const;
  /// Appends the tokens of `text` to `out`, using the caller's per-thread scratch.
  void encode_into(std::string_view text, SpecialTokens special, std::vector<TokenId>& out,
                   EncodeScratch& scratch) const;

  /// The bytes the ids stand for; throws std::runtime_error on an id >= vocab_size().
  std::string decode(std::span<const TokenId> ids) const;
  /// Bytes of one id (eot gives "<|endoftext|>").
  std::string_view token_bytes(TokenId id) const;

  std::size_t vocab_size() const { return std::max<std::size_t>(vocab_->ranks.size(), vocab_->eot) + 1; }
  TokenId eot() const { return vocab_->eot; }
  const BpeVocab& vocab() const { return *vocab_; }
  const Gpt2PreTokenizer& pre_tokenizer() const { return *pre_; }

 private:
  void encode_ordinary_into(std::string_view text, std::vector<TokenId>& out, EncodeScratch& scratch) const;

  std::shared_ptr<const BpeVocab> vocab_;
  std::shared_ptr<const Gpt2PreTokenizer> pre_;
};

}  // namespace gaugelab::data
