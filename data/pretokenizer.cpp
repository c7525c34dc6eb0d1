#include "data/pretokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "data/utf8.hpp"

namespace gaugelab::data {

namespace {

// Unicode White_Space (PropList.txt), the set the reference's `\s` matches.
constexpr const char* kSpace =
    "\\x{09}-\\x{0d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}"
    "\\x{205f}\\x{3000}";

std::string build_pattern() {
  const std::string s = kSpace;
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" + s + "\\p{L}\\p{N}]+|[" + s + "]+(?![^" + s +
         "])|[" + s + "]+";
}

// JIT stack: the pattern's repeats are single-character classes, which need constant stack
// however long the run; 32 KiB grows to at most 1 MiB before PCRE2 reports a limit.
constexpr std::size_t kJitStackStart = 32 * 1024;
constexpr std::size_t kJitStackMax = 1024 * 1024;

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

}  // namespace

struct PreTokenizerScratch::Impl {
  pcre2_match_data* md = nullptr;
  pcre2_match_context* mctx = nullptr;
  pcre2_jit_stack* stack = nullptr;
  std::string sanitised;
  std::vector<std::size_t> placeholders;
  Impl() {
    md = pcre2_match_data_create(1, nullptr);
    mctx = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr);
    if (!md || !mctx || !stack) throw std::runtime_error("pre-tokenizer: PCRE2 could not allocate match data");
    pcre2_jit_stack_assign(mctx, nullptr, stack);
  }
  ~Impl() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(mctx);
    pcre2_match_data_free(md);
  }
};

PreTokenizerScratch::PreTokenizerScratch() : impl_(std::make_unique<Impl>()) {}
PreTokenizerScratch::~PreTokenizerScratch() = default;

const std::string& Gpt2PreTokenizer::pattern() {
  static const std::string p = build_pattern();
  return p;
}

Gpt2PreTokenizer::Gpt2PreTokenizer() {
  int err = 0;
  PCRE2_SIZE err_off = 0;
  const std::string& p = pattern();
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &err,
                                   &err_off, nullptr);
  if (!code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw std::runtime_error("pre-tokenizer: PCRE2 rejected the GPT-2 pattern at offset " + std::to_string(err_off) +
                             ": " + reinterpret_cast<const char*>(msg));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Gpt2PreTokenizer::~Gpt2PreTokenizer() { pcre2_code_free(as_code(code_)); }

std::string_view Gpt2PreTokenizer::sanitise(std::string_view text, PreTokenizerScratch& scratch) const {
  auto& s = *scratch.impl_;
  s.placeholders.clear();
  std::size_t valid = utf8_valid_prefix(text);
  if (valid == text.size()) return text;
  s.sanitised.assign(text.data(), valid);
  std::size_t i = valid;
  while (i < text.size()) {
    const std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      s.placeholders.push_back(s.sanitised.size());
      s.sanitised += "\xEF\xBF\xBD";  // U+FFFD, a symbol (category So)
      ++i;
    } else {
      const std::size_t run = len + utf8_valid_prefix(text.substr(i + len));
      s.sanitised.append(text.data() + i, run);
      i += run;
    }
  }
  return s.sanitised;
}

const std::vector<std::size_t>& Gpt2PreTokenizer::placeholders(const PreTokenizerScratch& scratch) {
  return scratch.impl_->placeholders;
}

std::size_t Gpt2PreTokenizer::piece_end(std::string_view subject, std::size_t pos,
                                        PreTokenizerScratch& scratch) const {
  auto& s = *scratch.impl_;
  const auto* subj = reinterpret_cast<PCRE2_SPTR>(subject.data());
  // Compiled ANCHORED: each call matches the piece starting exactly at pos. The subject was
  // validated (or sanitised) once up front, so the interpreter skips its O(n) UTF check.
  const int rc = jit_ ? pcre2_jit_match(as_code(code_), subj, subject.size(), pos, 0, s.md, s.mctx)
                      : pcre2_match(as_code(code_), subj, subject.size(), pos, PCRE2_NO_UTF_CHECK, s.md, s.mctx);
  if (rc <= 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw std::runtime_error("pre-tokenizer: no match at byte " + std::to_string(pos) + ": " +
                             reinterpret_cast<const char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.md);
  if (ov[1] <= pos) throw std::runtime_error("pre-tokenizer: empty match at byte " + std::to_string(pos));
  return ov[1];
}

std::vector<std::string> Gpt2PreTokenizer::split(std::string_view text) const {
  PreTokenizerScratch scratch;
  std::vector<std::string> out;
  for_each_piece(text, scratch, [&](std::size_t b, std::size_t e) { out.emplace_back(text.substr(b, e - b)); });
  return out;
}

}  // namespace gaugelab::data
