// The trainer's batches. Training windows are a pure function of (seed, step, micro-step, rank): no
// loader state exists, so a resumed run (which only knows its step) reads exactly what the
// uninterrupted run read, and a data-parallel rank reads its own slice of every step's global batch.
// Validation uses fixed windows spread evenly over val.bin (the same rule as `gaugelab eval`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "data/token_files.hpp"

namespace gaugelab::gpt2 {

/// A compact vocabulary (--compact-vocab): the ids that occur in any of `paths`, in increasing order,
/// renumbered 0..K−1. Small corpora (the synthetic one uses ~400 of GPT-2's 50257 ids) then train
/// with a K-row LM head instead of a 50304-row one.
struct VocabMap {
  std::vector<std::int32_t> table;  // [65536] id -> compact id, −1 where the id never occurs; empty = identity
  std::vector<std::int32_t> ids;    // [K] the original id of each compact id
};
VocabMap compact_vocab(const std::vector<std::string>& paths);

/// Random windows of T+1 tokens from a memory-mapped token file. Sample g of the run (g counts every
/// sequence of every rank: g = ((step·accum + micro)·world + rank)·B + row) starts at
/// mix_seed(seed, g) mod (N − T). With world 1 and accum k, a run reads the same global batch as
/// world k and accum 1: micro-step i of the first is rank i of the second.
class TrainBatches {
 public:
  TrainBatches(const std::string& path, std::uint64_t seed, std::int64_t batch_size, std::int64_t seq_len,
               std::int64_t grad_accum, int rank, int world, std::int64_t vocab, const VocabMap& map = {});
  /// [B, T+1] int64 on the CPU: inputs are [:, :T], targets [:, 1:]. step is 0-based.
  at::Tensor batch(std::int64_t step, std::int64_t micro) const;
  /// First token of sample g (exposed for tests of the order rule).
  std::uint64_t window_start(std::uint64_t sample) const;
  std::size_t tokens() const { return file_.size(); }

 private:
  data::MappedTokens file_;
  std::uint64_t seed_;
  std::int64_t B_, T_, accum_;
  int rank_, world_;
  std::int64_t vocab_;
  std::vector<std::int32_t> map_;
};

/// `batches` fixed [B, T+1] windows evenly spread over a token file (first at 0, last at the end);
/// the ids are checked against the vocabulary once, on open.
class ValidationBatches {
 public:
  ValidationBatches(const std::string& path, std::int64_t batch_size, std::int64_t seq_len, std::int64_t batches,
                    std::int64_t vocab, const VocabMap& map = {});
  at::Tensor batch(std::int64_t i) const;  // [B, T+1] int64 on the CPU
  std::int64_t count() const { return batches_; }

 private:
  data::MappedTokens file_;
  std::int64_t B_, T_, batches_;
  std::vector<std::int32_t> map_;
};

/// splitmix64 of (seed, index): the one hash behind every training window.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t index);

}  // namespace gaugelab::gpt2
