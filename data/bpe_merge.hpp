// The byte-pair merge loop of GPT-2 BPE, with merge priority = rank of the merged bytes.
//
// Start from single bytes; repeatedly merge the adjacent pair whose concatenation has the lowest
// rank (the leftmost such pair on a tie) until no adjacent pair is a token. Two implementations give
// identical results: a flat O(n^2) loop that is fastest on the short pieces text is made of, and a
// heap over a linked list, O(n log n), used for long pieces (runs of digits, base64 blobs, long
// words, invalid bytes) so that no input can make encoding quadratic.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "data/rank_table.hpp"

namespace gaugelab::data {

/// Reusable buffers for the merge loops (one per thread).
struct BpeScratch {
  std::vector<std::uint32_t> bounds;     // part start offsets
  std::vector<TokenId> pair_rank;        // rank of merging part j with part j+1
  std::vector<std::uint32_t> next, prev; // heap version: linked list of parts by start offset
  struct Entry {
    TokenId rank;
    std::uint32_t start, end;  // the pair covers piece[start, end)
  };
  std::vector<Entry> heap;
};

/// Pieces up to this many bytes use the flat loop, longer ones the heap (results are identical;
/// the value only trades speed and was chosen by measurement).
inline constexpr std::size_t kBpeFlatMaxBytes = 64;

/// Appends the tokens of `piece` to `out`. Every single byte must be a token of `ranks`.
void bpe_merge(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& scratch);
/// The two implementations, exposed so tests can check they agree.
void bpe_merge_flat(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& scratch);
void bpe_merge_heap(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& scratch);

}  // namespace gaugelab::data
