#include "gpt2/train/data_loader.hpp"

#include <limits>
#include <stdexcept>

#include <ATen/ops/empty.h>

namespace gaugelab::gpt2 {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

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

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(splitmix64(seed) ^ splitmix64(index + 0x632be59bd9b4e019ULL));
}

TrainBatches::TrainBatches(const std::string& path, std::uint64_t seed, std::int64_t batch_size, std::int64_t seq_len,
                           std::int64_t grad_accum, int rank, int world, std::int64_t vocab, const VocabMap& map)
    : file_(data::MappedTokens::open(path)), seed_(seed), B_(batch_size), T_(seq_len), accum_(grad_accum),
      rank_(rank), world_(world), vocab_(vocab), map_(map.table) {
  check_length(file_, T_);
}

std::uint64_t TrainBatches::window_start(std::uint64_t sample) const {
  const std::uint64_t n_starts = file_.size() - static_cast<std::uint64_t>(T_);  // starts 0 .. N−T−1
  return mix_seed(seed_, sample) % n_starts;
}

at::Tensor TrainBatches::batch(std::int64_t step, std::int64_t micro) const {
  const std::size_t span = static_cast<std::size_t>(T_) + 1;
  at::Tensor buf = at::empty({B_, static_cast<std::int64_t>(span)}, at::TensorOptions().dtype(at::kLong));
  std::int64_t* p = buf.data_ptr<std::int64_t>();
  const auto first = static_cast<std::uint64_t>(((step * accum_ + micro) * world_ + rank_) * B_);
  for (std::int64_t row = 0; row < B_; ++row)
    copy_window(file_, window_start(first + static_cast<std::uint64_t>(row)), span, p + row * span, vocab_, map_);
  return buf;
}

ValidationBatches::ValidationBatches(const std::string& path, std::int64_t batch_size, std::int64_t seq_len,
                                     std::int64_t batches, std::int64_t vocab, const VocabMap& map)
    : file_(data::MappedTokens::open(path)), B_(batch_size), T_(seq_len), batches_(batches), map_(map.table) {
  check_length(file_, T_);
  if (map_.empty()) {
    file_.check_ids_below(static_cast<std::size_t>(vocab));
  } else {
    for (std::size_t i = 0; i < file_.size(); ++i) {
      const std::int32_t c = map_[file_.tokens()[i]];
      if (c < 0 || c >= vocab)
        throw std::runtime_error(path + ": token id " + std::to_string(file_.tokens()[i]) + " at position " +
                                 std::to_string(i) + " is not in the compact vocabulary");
    }
  }
}

at::Tensor ValidationBatches::batch(std::int64_t i) const {
  const std::size_t span = static_cast<std::size_t>(T_) + 1, total = file_.size();
  const std::size_t windows = static_cast<std::size_t>(B_ * batches_);
  at::Tensor buf = at::empty({B_, static_cast<std::int64_t>(span)}, at::TensorOptions().dtype(at::kLong));
  std::int64_t* p = buf.data_ptr<std::int64_t>();
  for (std::int64_t row = 0; row < B_; ++row) {
    const std::size_t w = static_cast<std::size_t>(i * B_ + row);
    const std::size_t start =
        windows <= 1 ? 0 : static_cast<std::size_t>((static_cast<long double>(total - span) * w) / (windows - 1));
    copy_window(file_, start, span, p + row * span, std::numeric_limits<std::int64_t>::max(), map_);
  }
  return buf;
}

}  // namespace gaugelab::gpt2
