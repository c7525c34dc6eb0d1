#include "data/rank_table.hpp"

#include <cstring>
#include <stdexcept>

namespace gaugelab::data {

std::uint64_t RankTable::hash(std::string_view bytes) {
  // Eight bytes at a time through a multiply-xorshift mixer (splitmix64 finaliser).
  auto mix = [](std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ bytes.size();
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h ^ w);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = mix(h ^ w ^ (static_cast<std::uint64_t>(n) << 59));
  }
  return mix(h);
}

void RankTable::reserve(std::size_t n) {
  arena_.reserve(n * 8);
  offsets_.reserve(n + 1);
  std::size_t cap = 16;
  while (cap < 4 * n) cap *= 2;  // load factor <= 1/4 keeps probe chains short
  if (cap > slots_.size()) rehash(cap);
}

void RankTable::place(TokenId rank, std::uint64_t h) {
  std::size_t i = h & mask_;
  while (slots_[i].rank_plus_one != 0) i = (i + 1) & mask_;
  slots_[i] = Slot{rank + 1, static_cast<std::uint32_t>(h >> 32)};
}

void RankTable::rehash(std::size_t capacity) {
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (TokenId r = 0; r < size(); ++r) place(r, hash(bytes_of(r)));
}

TokenId RankTable::push(std::string_view bytes) {
  const TokenId existing = find(bytes);
  if (existing != npos) return existing;
  if (size() >= npos - 1) throw std::runtime_error("rank table: too many tokens");
  if (offsets_.empty()) offsets_.push_back(0);
  arena_.append(bytes);
  offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
  const TokenId rank = static_cast<TokenId>(size() - 1);
  if (4 * size() > slots_.size()) {
    rehash(slots_.empty() ? 16 : 2 * slots_.size());  // includes the new entry
  } else {
    place(rank, hash(bytes));
  }
  return npos;
}

}  // namespace gaugelab::data
