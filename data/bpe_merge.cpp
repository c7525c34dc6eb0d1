#include "data/bpe_merge.hpp"

#include <algorithm>
#include <stdexcept>

namespace gaugelab::data {

namespace {

TokenId must_find(const RankTable& ranks, std::string_view bytes) {
  const TokenId r = ranks.find(bytes);
  if (r == RankTable::npos) throw std::runtime_error("BPE: a part is not a token (the ranks lack a single byte)");
  return r;
}

}  // namespace

void bpe_merge_flat(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& s) {
  const std::uint32_t n = static_cast<std::uint32_t>(piece.size());
  if (n == 0) return;
  auto& b = s.bounds;
  auto& pr = s.pair_rank;
  b.resize(n + 1);
  for (std::uint32_t i = 0; i <= n; ++i) b[i] = i;
  // pair_rank[j]: merging part j (b[j], b[j+1]) with part j+1 (b[j+1], b[j+2]).
  auto rank_of = [&](std::size_t j) -> TokenId {
    return j + 2 < b.size() ? ranks.find(piece.substr(b[j], b[j + 2] - b[j])) : RankTable::npos;
  };
  pr.resize(n);
  for (std::size_t j = 0; j < n; ++j) pr[j] = rank_of(j);
  while (pr.size() > 1) {
    std::size_t best = 0;
    TokenId best_rank = pr[0];
    for (std::size_t j = 1; j < pr.size(); ++j)
      if (pr[j] < best_rank) best_rank = pr[j], best = j;  // strict: the leftmost minimum wins
    if (best_rank == RankTable::npos) break;
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    pr.erase(pr.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    pr[best] = rank_of(best);
    if (best > 0) pr[best - 1] = rank_of(best - 1);
  }
  for (std::size_t j = 0; j + 1 < b.size(); ++j) out.push_back(must_find(ranks, piece.substr(b[j], b[j + 1] - b[j])));
}

void bpe_merge_heap(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& s) {
  const std::uint32_t n = static_cast<std::uint32_t>(piece.size());
  if (n == 0) return;
  constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  // Parts are named by their start offset; next[start] is the start of the following part (n at
  // the end), prev[start] the preceding one (kNone at the front). A dead part has next == kNone.
  auto& next = s.next;
  auto& prev = s.prev;
  next.resize(n);
  prev.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) next[i] = i + 1, prev[i] = i == 0 ? kNone : i - 1;
  auto& heap = s.heap;
  heap.clear();
  // Min-heap on (rank, start): the lowest rank first, the leftmost on a tie.
  auto later = [](const BpeScratch::Entry& a, const BpeScratch::Entry& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.start > b.start;
  };
  auto push_pair = [&](std::uint32_t start) {
    const std::uint32_t mid = next[start];
    if (mid >= n) return;
    const std::uint32_t end = next[mid];
    const TokenId r = ranks.find(piece.substr(start, end - start));
    if (r == RankTable::npos) return;
    heap.push_back({r, start, end});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (std::uint32_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const BpeScratch::Entry e = heap.back();
    heap.pop_back();
    // Stale unless part `start` is alive and still ends, together with its right neighbour, at `end`.
    const std::uint32_t mid = next[e.start];
    if (mid == kNone || mid >= n || next[mid] != e.end) continue;
    next[e.start] = e.end;  // merge: part `mid` disappears
    next[mid] = kNone;
    if (e.end < n) prev[e.end] = e.start;
    push_pair(e.start);
    if (prev[e.start] != kNone) push_pair(prev[e.start]);
  }
  for (std::uint32_t i = 0; i < n; i = next[i]) out.push_back(must_find(ranks, piece.substr(i, next[i] - i)));
}

void bpe_merge(const RankTable& ranks, std::string_view piece, std::vector<TokenId>& out, BpeScratch& s) {
  if (piece.size() <= kBpeFlatMaxBytes)
    bpe_merge_flat(ranks, piece, out, s);
  else
    bpe_merge_heap(ranks, piece, out, s);
}

}  // namespace gaugelab::data
