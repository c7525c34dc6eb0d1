#include "data/token_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace gaugelab::data {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw std::runtime_error(path + ": " + what); }

// The largest count an llm.c header (int32) can hold.
constexpr std::uint64_t kLlmcMaxTokens = 0x7FFFFFFF;

}  // namespace

const char* to_string(TokenFileFormat f) { return f == TokenFileFormat::llmc ? "llmc" : "nanogpt"; }

TokenFileWriter::TokenFileWriter(const std::string& path, TokenFileFormat format) : path_(path), format_(format) {
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) fail(path, std::string("cannot create token file: ") + std::strerror(errno));
  if (format_ == TokenFileFormat::llmc) {
    const std::array<std::int32_t, kLlmcHeaderInts> header{};  // count filled in by close()
    if (std::fwrite(header.data(), sizeof(std::int32_t), header.size(), f_) != header.size())
      fail(path, "write failed (header)");
  }
}

TokenFileWriter::~TokenFileWriter() {
  if (f_) std::fclose(f_);
}

void TokenFileWriter::append(std::span<const TokenId> tokens) {
  if (!f_) fail(path_, "append after close");
  if (format_ == TokenFileFormat::llmc && count_ + tokens.size() > kLlmcMaxTokens)
    fail(path_, "more than 2^31-1 tokens do not fit an llm.c shard (use a smaller shard size)");
  // Check every id before writing any, so a refused call leaves the file as it was.
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] > 0xFFFFu)
      fail(path_, "token id " + std::to_string(tokens[i]) + " at position " + std::to_string(count_ + i) +
                      " does not fit uint16 (ids must be < 65536)");
  std::array<std::uint16_t, 4096> buf;
  for (std::size_t done = 0; done < tokens.size();) {
    const std::size_t n = std::min(buf.size(), tokens.size() - done);
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<std::uint16_t>(tokens[done + i]);
    if (std::fwrite(buf.data(), sizeof(std::uint16_t), n, f_) != n)
      fail(path_, std::string("write failed: ") + std::strerror(errno));
    done += n;
  }
  count_ += tokens.size();
}

void TokenFileWriter::close() {
  if (!f_) return;
  bool ok = true;
  if (format_ == TokenFileFormat::llmc) {
    const std::array<std::int32_t, 3> head{kLlmcMagic, kLlmcVersion, static_cast<std::int32_t>(count_)};
    ok = std::fseek(f_, 0, SEEK_SET) == 0 && std::fwrite(head.data(), sizeof(std::int32_t), head.size(), f_) == head.size();
  }
  ok = std::fflush(f_) == 0 && ok;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok) fail(path_, std::string("write failed when closing: ") + std::strerror(errno));
}

void write_token_file(const std::string& path, std::span<const TokenId> tokens, TokenFileFormat format) {
  TokenFileWriter w(path, format);
  w.append(tokens);
  w.close();
}

TokenFileFormat detect_token_file_format(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(path, std::string("cannot open token file: ") + std::strerror(errno));
  std::int32_t magic = 0;
  const bool got = std::fread(&magic, sizeof magic, 1, f) == 1;
  std::fclose(f);
  return got && magic == kLlmcMagic ? TokenFileFormat::llmc : TokenFileFormat::nanogpt;
}

MappedTokens MappedTokens::open(const std::string& path, TokenFileFormat format) {
  MappedTokens m;
  m.path_ = path;
  m.format_ = format;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open token file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes > 0) {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      fail(path, std::string("mmap failed: ") + std::strerror(errno));
    }
    m.map_ = p;
    m.map_bytes_ = bytes;
  }
  ::close(fd);  // the mapping stays valid
  const auto* base = static_cast<const unsigned char*>(m.map_);
  if (format == TokenFileFormat::nanogpt) {
    if (bytes % 2 != 0)
      fail(path, "size " + std::to_string(bytes) + " bytes is odd: not a uint16 token file (truncated or corrupt)");
    m.data_ = reinterpret_cast<const std::uint16_t*>(base);
    m.size_ = bytes / 2;
    return m;
  }
  if (bytes < kLlmcHeaderBytes)
    fail(path, "truncated llm.c shard: " + std::to_string(bytes) + " bytes, the header alone is " +
                   std::to_string(kLlmcHeaderBytes));
  std::int32_t head[3];
  std::memcpy(head, base, sizeof head);
  if (head[0] != kLlmcMagic)
    fail(path, "not an llm.c token shard (magic " + std::to_string(head[0]) + ", expected " +
                   std::to_string(kLlmcMagic) + ")");
  if (head[1] != kLlmcVersion)
    fail(path, "unsupported llm.c shard version " + std::to_string(head[1]) + " (expected " +
                   std::to_string(kLlmcVersion) + ")");
  if (head[2] < 0) fail(path, "corrupt llm.c header: negative token count " + std::to_string(head[2]));
  const std::size_t expect = kLlmcHeaderBytes + 2 * static_cast<std::size_t>(head[2]);
  if (bytes != expect)
    fail(path, "size " + std::to_string(bytes) + " bytes does not match the header's " + std::to_string(head[2]) +
                   " tokens (expected " + std::to_string(expect) + " bytes): truncated or corrupt");
  m.data_ = reinterpret_cast<const std::uint16_t*>(base + kLlmcHeaderBytes);
  m.size_ = static_cast<std::size_t>(head[2]);
  return m;
}

void MappedTokens::check_ids_below(std::size_t vocab_size) const {
  for (std::size_t i = 0; i < size_; ++i)
    if (data_[i] >= vocab_size)
      fail(path_, "token id " + std::to_string(data_[i]) + " at position " + std::to_string(i) +
                      " is not below the vocabulary size " + std::to_string(vocab_size));
}

void MappedTokens::release() {
  if (map_) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  data_ = nullptr;
  size_ = 0;
}

MappedTokens::MappedTokens(MappedTokens&& o) noexcept
    : path_(std::move(o.path_)), format_(o.format_), map_(o.map_), map_bytes_(o.map_bytes_), data_(o.data_),
      size_(o.size_) {
  o.map_ = nullptr, o.map_bytes_ = 0, o.data_ = nullptr, o.size_ = 0;
}

MappedTokens& MappedTokens::operator=(MappedTokens&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_), format_ = o.format_, map_ = o.map_, map_bytes_ = o.map_bytes_, data_ = o.data_,
    size_ = o.size_;
    o.map_ = nullptr, o.map_bytes_ = 0, o.data_ = nullptr, o.size_ = 0;
  }
  return *this;
}

MappedTokens::~MappedTokens() { release(); }

}  // namespace gaugelab::data
