#include "gpt2/train/data_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include <ATen/ops/empty.h>

#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace {

void check_length(const data::MappedTokens& f, std::int64_t T) {
  if (f.size() < static_cast<std::size_t>(T) + 2)
    throw std::runtime_error(f.path() + ": " + std::to_string(f.size()) + " tokens, too few for sequences of " +
                             std::to_string(T) + " (+1 target)");
}

// Copies `span` tokens starting at `start` into row `row` of p [B, span], checking ids < vocab.
void copy_window(const data::MappedTokens& f, std::size_t start, std::size_t span, std::int64_t* row,
                 std::int64_t vocab, const std::vector<std::int32_t>& map) {
  const auto tok = f.tokens();
  for (std::size_t t = 0; t < span; ++t) {
    const std::int64_t id = map.empty() ? std::int64_t{tok[start + t]} : std::int64_t{map[tok[start + t]]};
    if (id < 0)
      throw std::runtime_error(f.path() + ": token id " + std::to_string(tok[start + t]) + " at position " +
                               std::to_string(start + t) + " is not in the compact vocabulary");
    if (id >= vocab)
      throw std::runtime_error(f.path() + ": token id " + std::to_string(id) + " at position " +
                               std::to_string(start + t) + " is not below the vocabulary size " + std::to_string(vocab));
    row[t] = id;
  }
}

// Every id of every file below `vocab` (after `map`, when the vocabulary is compact); throws one line
// naming the file, the position and the id.
void check_all_ids(const std::vector<data::MappedTokens>& files, std::int64_t vocab, const std::vector<std::int32_t>& map) {
  for (const data::MappedTokens& f : files) {
    if (map.empty()) {
      f.check_ids_below(static_cast<std::size_t>(vocab));
      continue;
    }
    for (std::size_t i = 0; i < f.size(); ++i) {
      const std::int32_t c = map[f.tokens()[i]];
      if (c < 0 || c >= vocab)
        throw std::runtime_error(f.path() + ": token id " + std::to_string(f.tokens()[i]) + " at position " +
                                 std::to_string(i) + " is not in the compact vocabulary");
    }
  }
}

}  // namespace

VocabMap compact_vocab(const std::vector<std::string>& paths) {
  std::vector<char> seen(65536, 0);
  for (const std::string& p : paths) {
    const data::MappedTokens f = data::MappedTokens::open(p);
    for (const std::uint16_t id : f.tokens()) seen[id] = 1;
  }
  VocabMap m;
  m.table.assign(65536, -1);
  for (std::size_t id = 0; id < seen.size(); ++id)
    if (seen[id]) {
      m.table[id] = static_cast<std::int32_t>(m.ids.size());
      m.ids.push_back(static_cast<std::int32_t>(id));
    }
  return m;
}

std::vector<std::string> split_files(const std::string& dir, const std::string& split) {
  namespace fs = std::filesystem;
  const fs::path one = fs::path(dir) / (split + ".bin");
  if (fs::exists(one)) return {one.string()};
  std::vector<std::string> shards;
  std::error_code ec;
  const std::string tag = "_" + split + "_";
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > 4 && name.compare(name.size() - 4, 4, ".bin") == 0 &&
        name.find(tag) != std::string::npos)
      shards.push_back(e.path().string());
  }
  if (ec) throw std::runtime_error(dir + ": cannot list the data directory (" + ec.message() + ")");
  if (shards.empty())
    throw std::runtime_error(dir + ": no " + split + ".bin and no llm.c shards *" + tag + "*.bin (see gaugelab prepare)");
  std::sort(shards.begin(), shards.end());
  return shards;
}

TokenShards::TokenShards(const std::vector<std::string>& paths, std::int64_t span) {
  if (paths.empty()) throw std::invalid_argument("TokenShards: no token files");
  for (const std::string& p : paths) {
    files_.push_back(data::MappedTokens::open(p));
    check_length(files_.back(), span - 1);
    first_.push_back(total_);
    total_ += files_.back().size() - static_cast<std::uint64_t>(span) + 1;
  }
}

std::pair<const data::MappedTokens*, std::size_t> TokenShards::locate(std::uint64_t k) const {
  const auto it = std::upper_bound(first_.begin(), first_.end(), k);  // first file starting after k
  const std::size_t i = static_cast<std::size_t>(it - first_.begin()) - 1;
  return {&files_[i], static_cast<std::size_t>(k - first_[i])};
}

std::size_t TokenShards::tokens() const {
  std::size_t n = 0;
  for (const data::MappedTokens& f : files_) n += f.size();
  return n;
}

TrainBatches::TrainBatches(const std::vector<std::string>& paths, std::uint64_t seed, std::int64_t batch_size,
                           std::int64_t seq_len, std::int64_t grad_accum, int rank, int world, std::int64_t vocab,
                           const VocabMap& map)
    : shards_(paths, seq_len + 1), seed_(seed), B_(batch_size), T_(seq_len), accum_(grad_accum), rank_(rank),
      world_(world), vocab_(vocab), map_(map.table) {
  // Every id is checked before the first step (a bad id in the middle of train.bin once surfaced only when
  // a window reached it, hours into a run): one pass over the mapped files, ~1 s per GB.
  check_all_ids(shards_.files(), vocab, map_);
}

std::uint64_t TrainBatches::window_start(std::uint64_t sample) const {
  return mix_seed(seed_, sample) % shards_.starts();  // one file of N tokens: starts 0 .. N−T−1
}

at::Tensor TrainBatches::batch(std::int64_t step, std::int64_t micro) const {
  const std::size_t span = static_cast<std::size_t>(T_) + 1;
  at::Tensor buf = at::empty({B_, static_cast<std::int64_t>(span)}, at::TensorOptions().dtype(at::kLong));
  std::int64_t* p = buf.data_ptr<std::int64_t>();
  const auto first = static_cast<std::uint64_t>(((step * accum_ + micro) * world_ + rank_) * B_);
  for (std::int64_t row = 0; row < B_; ++row) {
    const auto [file, start] = shards_.locate(window_start(first + static_cast<std::uint64_t>(row)));
    copy_window(*file, start, span, p + row * span, vocab_, map_);
  }
  return buf;
}

ValidationBatches::ValidationBatches(const std::vector<std::string>& paths, std::int64_t batch_size,
                                     std::int64_t seq_len, std::int64_t batches, std::int64_t vocab,
                                     const VocabMap& map)
    : shards_(paths, seq_len + 1), B_(batch_size), T_(seq_len), batches_(batches), map_(map.table) {
  // More windows than the files have start positions only repeats windows (and --eval-batches 1e12 once
  // ran for ever): the count is bounded by the data.
  const std::uint64_t starts = shards_.starts();
  if (static_cast<long double>(batch_size) * static_cast<long double>(batches) > static_cast<long double>(starts))
    throw io::UsageError("--eval-batches " + std::to_string(batches) + " x --batch-size " + std::to_string(batch_size) +
                         " windows exceed the " + std::to_string(starts) + " distinct windows of " +
                         std::to_string(seq_len + 1) + " tokens in the validation data (at most " +
                         std::to_string(starts / static_cast<std::uint64_t>(batch_size)) + " batches)");
  check_all_ids(shards_.files(), vocab, map_);
}

at::Tensor ValidationBatches::batch(std::int64_t i) const {
  const std::size_t span = static_cast<std::size_t>(T_) + 1;
  const std::size_t last = shards_.starts() - 1;  // one file of N tokens: N − span
  const std::size_t windows = static_cast<std::size_t>(B_ * batches_);
  at::Tensor buf = at::empty({B_, static_cast<std::int64_t>(span)}, at::TensorOptions().dtype(at::kLong));
  std::int64_t* p = buf.data_ptr<std::int64_t>();
  for (std::int64_t row = 0; row < B_; ++row) {
    const std::size_t w = static_cast<std::size_t>(i * B_ + row);
    const std::size_t k =
        windows <= 1 ? 0 : static_cast<std::size_t>((static_cast<long double>(last) * w) / (windows - 1));
    const auto [file, start] = shards_.locate(k);
    copy_window(*file, start, span, p + row * span, std::numeric_limits<std::int64_t>::max(), map_);
  }
  return buf;
}

}  // namespace gaugelab::gpt2
