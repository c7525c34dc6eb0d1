// Token bytes <-> rank (= token id) for byte-level BPE.
//
// Open-addressing hash table over the token byte strings, which live in one arena; lookups take a
// string_view and never allocate (the merge loop asks for every adjacent pair of a piece).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gaugelab::data {

using TokenId = std::uint32_t;

class RankTable {
 public:
  static constexpr TokenId npos = 0xFFFFFFFFu;

  /// Appends `bytes` with the next rank (size() before the call). Returns npos on success, or the
  /// rank that already holds these bytes (then nothing is added).
  TokenId push(std::string_view bytes);
  void reserve(std::size_t n);

  /// Rank of `bytes`, or npos.
  TokenId find(std::string_view bytes) const {
    if (slots_.empty()) return npos;
    const std::uint64_t h = hash(bytes);
    const std::uint32_t tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.rank_plus_one == 0) return npos;
      if (s.tag == tag && bytes_of(s.rank_plus_one - 1) == bytes) return s.rank_plus_one - 1;
    }
  }

  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  /// Bytes of token `rank` (rank < size()).
  std::string_view bytes_of(TokenId rank) const {
    return std::string_view(arena_).substr(offsets_[rank], offsets_[rank + 1] - offsets_[rank]);
  }

  static std::uint64_t hash(std::string_view bytes);

 private:
  struct Slot {
    std::uint32_t rank_plus_one = 0;  // 0: empty
    std::uint32_t tag = 0;            // high half of the hash, to skip most byte comparisons
  };
  void rehash(std::size_t capacity);
  void place(TokenId rank, std::uint64_t h);

  std::string arena_;
  std::vector<std::uint32_t> offsets_;  // [size()+1] arena offsets
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace gaugelab::data
