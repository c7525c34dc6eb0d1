// The trainer's batches. Training windows are a pure function of (seed, step, micro-step, rank): no
// loader state exists, so a resumed run (which only knows its step) reads exactly what the
// uninterrupted run read, and a data-parallel rank reads its own slice of every step's global batch.
// Validation uses fixed windows spread evenly over the validation tokens (the same rule as `gaugelab
// eval`). A split is one file (nanoGPT's train.bin) or a list of shards (llm.c's *_train_*.bin), all
// memory-mapped; a window never crosses from one shard into the next.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/random.hpp"
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

/// The token files of one split ("train" or "val") in `dir`: DIR/<split>.bin if it exists, else every
/// llm.c-style shard DIR/*_<split>_*.bin in name order. Throws one line naming DIR when neither exists.
std::vector<std::string> split_files(const std::string& dir, const std::string& split);

/// Several memory-mapped token files seen as one list of window starts: file i contributes
/// N_i − span + 1 starts (0 .. N_i − span), in file order. With one file, start k is position k.
class TokenShards {
 public:
  TokenShards(const std::vector<std::string>& paths, std::int64_t span);
  std::uint64_t starts() const { return total_; }
  /// The file and position of start k (< starts()).
  std::pair<const data::MappedTokens*, std::size_t> locate(std::uint64_t k) const;
  const std::vector<data::MappedTokens>& files() const { return files_; }
  std::size_t tokens() const;

 private:
  std::vector<data::MappedTokens> files_;
  std::vector<std::uint64_t> first_;  // [files] index of each file's first start
  std::uint64_t total_ = 0;
};

/// Random windows of T+1 tokens from memory-mapped token files. Sample g of the run (g counts every
/// sequence of every rank: g = ((step·accum + micro)·world + rank)·B + row, accum per rank) starts at
/// start mix_seed(seed, g) mod S of TokenShards (S = N − T for one file of N tokens). With world 1 and
/// accum k, a run reads the same global batch as world k and accum 1: micro-step i of the first is
/// rank i of the second.
class TrainBatches {
 public:
  TrainBatches(const std::vector<std::string>& paths, std::uint64_t seed, std::int64_t batch_size,
               std::int64_t seq_len, std::int64_t grad_accum, int rank, int world, std::int64_t vocab,
               const VocabMap& map = {});
  /// [B, T+1] int64 on the CPU: inputs are [:, :T], targets [:, 1:]. step is 0-based.
  at::Tensor batch(std::int64_t step, std::int64_t micro) const;
  /// Start index (in TokenShards' numbering) of sample g (exposed for tests of the order rule).
  std::uint64_t window_start(std::uint64_t sample) const;
  std::size_t tokens() const { return shards_.tokens(); }
  std::size_t files() const { return shards_.files().size(); }

 private:
  TokenShards shards_;
  std::uint64_t seed_;
  std::int64_t B_, T_, accum_;
  int rank_, world_;
  std::int64_t vocab_;
  std::vector<std::int32_t> map_;
};

/// `batches` fixed [B, T+1] windows evenly spread over the starts of the token files (first at 0, last
/// at the end); the ids are checked against the vocabulary once, on open.
class ValidationBatches {
 public:
  ValidationBatches(const std::vector<std::string>& paths, std::int64_t batch_size, std::int64_t seq_len,
                    std::int64_t batches, std::int64_t vocab, const VocabMap& map = {});
  at::Tensor batch(std::int64_t i) const;  // [B, T+1] int64 on the CPU
  std::int64_t count() const { return batches_; }

 private:
  TokenShards shards_;
  std::int64_t B_, T_, batches_;
  std::vector<std::int32_t> map_;
};

/// The one hash behind every training window (core/random.hpp).
using core::mix_seed;

}  // namespace gaugelab::gpt2
