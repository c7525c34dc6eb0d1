// SHA-256 (FIPS 180-4), to record and check which tokenizer file a corpus was prepared with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gaugelab::data {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  /// Lower-case hex digest; the object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view bytes);
/// Digest of a whole file; throws std::runtime_error naming the path if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace gaugelab::data
