// The GPT-2 pre-tokenizer: the regex that cuts text into pieces before byte-pair merging.
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// run through PCRE2 in UTF + UCP mode (JIT-compiled when the library supports it). Two details:
//  * `\s` is spelled out as the Unicode White_Space set (25 code points). PCRE2's own `\s` also
//    matches U+180E MONGOLIAN VOWEL SEPARATOR (no longer a space since Unicode 6.3), which the
//    reference (tiktoken, Rust regex) does not; spelling the set out makes them agree.
//  * Invalid UTF-8: every byte that is not part of a well-formed sequence (see utf8.hpp) is
//    classified as a symbol, i.e. it belongs to `[^\s\p{L}\p{N}]` exactly like U+FFFD would.
//    Internally each such byte is replaced by U+FFFD for matching and the piece boundaries are
//    mapped back to the original bytes, so pieces always concatenate to the input byte for byte.
//    This is what the reference regex gives on text decoded with errors="surrogateescape".
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gaugelab::data {

/// Per-thread matching state (PCRE2 match data, JIT stack, sanitised copy). Not shareable.
class PreTokenizerScratch {
 public:
  PreTokenizerScratch();
  ~PreTokenizerScratch();
  PreTokenizerScratch(const PreTokenizerScratch&) = delete;
  PreTokenizerScratch& operator=(const PreTokenizerScratch&) = delete;

 private:
  friend class Gpt2PreTokenizer;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class Gpt2PreTokenizer {
 public:
  Gpt2PreTokenizer();  // compiles the pattern; throws std::runtime_error if PCRE2 rejects it
  ~Gpt2PreTokenizer();
  Gpt2PreTokenizer(const Gpt2PreTokenizer&) = delete;
  Gpt2PreTokenizer& operator=(const Gpt2PreTokenizer&) = delete;

  /// The pattern as compiled (with `\s` spelled out).
  static const std::string& pattern();
  /// True when PCRE2 JIT compiled the pattern.
  bool jit() const { return jit_; }

  /// Calls on_piece(begin, end) with the byte range of every piece of `text`, in order; the
  /// ranges tile the text exactly. Thread-safe given one scratch per thread.
  template <class F>
  void for_each_piece(std::string_view text, PreTokenizerScratch& scratch, F&& on_piece) const {
    const std::string_view subject = sanitise(text, scratch);
    OffsetMap map(placeholders(scratch));
    std::size_t pos = 0;
    while (pos < subject.size()) {
      const std::size_t end = piece_end(subject, pos, scratch);
      const std::size_t b = map(pos);  // in this order: the map's cursor only moves forward
      const std::size_t e = map(end);
      on_piece(b, e);
      pos = end;
    }
  }

  /// Convenience: the pieces as strings (tests, small inputs).
  std::vector<std::string> split(std::string_view text) const;

 private:
  // Maps offsets in the sanitised subject (each invalid byte widened to 3 bytes) back to the
  // original text. Offsets are requested in increasing order, so a cursor suffices.
  struct OffsetMap {
    explicit OffsetMap(const std::vector<std::size_t>& starts) : starts_(starts) {}
    std::size_t operator()(std::size_t pos) {
      while (next_ < starts_.size() && starts_[next_] < pos) ++next_;
      return pos - 2 * next_;
    }
    const std::vector<std::size_t>& starts_;  // subject offsets of the U+FFFD placeholders
    std::size_t next_ = 0;
  };

  // Returns `text` itself when it is valid UTF-8, else a copy with each invalid byte replaced by
  // U+FFFD (the copy and the placeholder offsets live in the scratch).
  std::string_view sanitise(std::string_view text, PreTokenizerScratch& scratch) const;
  static const std::vector<std::size_t>& placeholders(const PreTokenizerScratch& scratch);
  // End of the piece that starts at `pos` (an anchored match; the pattern matches everywhere).
  std::size_t piece_end(std::string_view subject, std::size_t pos, PreTokenizerScratch& scratch) const;

  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

}  // namespace gaugelab::data
