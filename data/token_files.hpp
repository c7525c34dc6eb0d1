// Token files: nanoGPT raw uint16 (`train.bin`, `val.bin`) and llm.c shards.
//
//  * nanoGPT: the token ids as little-endian uint16, nothing else (so the size must be even).
//  * llm.c:   a header of 256 little-endian int32 — [0] magic 20240520, [1] version 1, [2] token
//             count, the rest zero — then `count` little-endian uint16 ids; the file size must be
//             exactly 1024 + 2·count.
//
// Writers refuse ids >= 65536 (they cannot be stored in uint16). Readers memory-map the file
// read-only and check everything above before handing out a single token; every problem is one
// std::runtime_error line that names the file.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "data/rank_table.hpp"

namespace gaugelab::data {

static_assert(std::endian::native == std::endian::little, "token files are read and written as little-endian");

enum class TokenFileFormat { nanogpt, llmc };

inline constexpr std::int32_t kLlmcMagic = 20240520;
inline constexpr std::int32_t kLlmcVersion = 1;
inline constexpr std::size_t kLlmcHeaderInts = 256;
inline constexpr std::size_t kLlmcHeaderBytes = kLlmcHeaderInts * sizeof(std::int32_t);

const char* to_string(TokenFileFormat f);

/// Streams tokens into a new file (an existing file at `path` is replaced; callers check first).
class TokenFileWriter {
 public:
  TokenFileWriter(const std::string& path, TokenFileFormat format);
  ~TokenFileWriter();  // closes quietly if close() was not called (the file is then incomplete)
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  /// Appends ids; throws (naming the id and its position) if one is >= 65536.
  void append(std::span<const TokenId> tokens);
  /// Completes the file (llm.c: fills in the header's count) and checks every write succeeded.
  void close();
  std::uint64_t count() const { return count_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  TokenFileFormat format_;
  std::FILE* f_ = nullptr;
  std::uint64_t count_ = 0;
};

/// Writes a whole file at once.
void write_token_file(const std::string& path, std::span<const TokenId> tokens, TokenFileFormat format);

/// llm.c if the file starts with the llm.c magic, else nanoGPT (nanoGPT files have no header; a
/// GPT-2 file cannot start with the magic, whose first uint16 would be id 54520 >= 50257).
TokenFileFormat detect_token_file_format(const std::string& path);

/// A read-only memory map of a token file, validated on open.
class MappedTokens {
 public:
  static MappedTokens open(const std::string& path, TokenFileFormat format);
  static MappedTokens open(const std::string& path) { return open(path, detect_token_file_format(path)); }

  MappedTokens(MappedTokens&& other) noexcept;
  MappedTokens& operator=(MappedTokens&& other) noexcept;
  MappedTokens(const MappedTokens&) = delete;
  MappedTokens& operator=(const MappedTokens&) = delete;
  ~MappedTokens();

  std::span<const std::uint16_t> tokens() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  TokenFileFormat format() const { return format_; }
  const std::string& path() const { return path_; }
  /// Throws (naming file, position and id) if any id is >= vocab_size.
  void check_ids_below(std::size_t vocab_size) const;

 private:
  MappedTokens() = default;
  void release();

  std::string path_;
  TokenFileFormat format_ = TokenFileFormat::nanogpt;
  void* map_ = nullptr;
  std::size_t map_bytes_ = 0;
  const std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace gaugelab::data
