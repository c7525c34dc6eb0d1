// The fixed-window validation loss every model verb reports (eval, merge-models): declared in loaded_model.hpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <ATen/ops/empty.h>

#include "data/token_files.hpp"
#include "gpt2/use/loaded_model.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace {

// The start of window i of n windows of `span` tokens spread evenly over a file of `total` tokens:
// the first at 0, the last ending at the file's end (windows overlap only when the file is small).
std::size_t window_start(std::size_t i, std::size_t n, std::size_t total, std::size_t span) {
  if (n <= 1) return 0;
  return static_cast<std::size_t>((static_cast<long double>(total - span) * i) / (n - 1));
}

}  // namespace

namespace {

// What the first bytes of a file say it is when it is not a token file ("" when they allow one). A token
// file is judged by its bytes, not its name: llm.c shards start with their magic, nanoGPT files have no
// header, so a file that starts as another format (a run log, weights, JSON, an archive, text) is refused.
std::string not_tokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  auto starts = [&](const char* magic, std::size_t n) { return head.size() >= n && head.compare(0, n, magic, n) == 0; };
  if (head.size() >= 4) {
    std::int32_t magic = 0;
    std::memcpy(&magic, head.data(), sizeof magic);
    if (magic == data::kLlmcMagic) return "";
  }
  if (starts("\x89HDF\r\n\x1a\n", 8)) return "an HDF5 file";
  if (starts("\x1f\x8b\x08", 3)) return "a gzip file";
  if (starts("PK\x03\x04", 4)) return "a zip archive";
  if (head.size() >= 10 && head[8] == '{' && head[9] == '"') {  // safetensors: u64 header length, then JSON
    std::uint64_t n = 0;
    std::memcpy(&n, head.data(), sizeof n);
    std::error_code ec;
    if (n >= 2 && n < std::filesystem::file_size(path, ec)) return "a safetensors file";
  }
  // Text: every byte printable or a line break. uint16 ids always hold bytes < 0x09 or > 0x7e somewhere
  // in 2048 tokens of real data (every id below 2304 has one; the common ones are there).
  if (head.size() >= 64 && std::all_of(head.begin(), head.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u >= 0x20 && u < 0x7f) || u == '\n' || u == '\r' || u == '\t';
      }))
    return head[0] == '{' || head[0] == '[' ? "a JSON file" : "a text file";
  return "";
}

}  // namespace

std::string token_file_of(const std::string& data) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(data, ec)) {
    const std::string val = (fs::path(data) / "val.bin").string();
    if (!fs::is_regular_file(val, ec))
      throw io::UsageError("--data " + data + " is a directory without val.bin (give a token file, e.g. DIR/val.bin)");
    return val;
  }
  if (!fs::exists(data, ec)) throw io::UsageError("--data " + data + ": no such file");
  if (!fs::is_regular_file(data, ec)) throw io::UsageError("--data " + data + " is not a regular file");
  if (const std::string what = not_tokens(data); !what.empty())
    throw io::UsageError("--data " + data + " is not a token file: it is " + what + " (nanoGPT or llm.c; see gaugelab prepare)");
  return data;
}

void check_window_count(const std::string& data, std::int64_t batch_size, std::int64_t batches, std::int64_t T) {
  const data::MappedTokens file = data::MappedTokens::open(token_file_of(data));
  const std::size_t span = static_cast<std::size_t>(T) + 1;
  const std::size_t starts = file.size() >= span ? file.size() - span + 1 : 0;
  if (static_cast<long double>(batch_size) * static_cast<long double>(batches) > static_cast<long double>(starts))
    throw io::UsageError("--batches " + std::to_string(batches) + " x --batch-size " + std::to_string(batch_size) +
                         " windows exceed the " + std::to_string(starts) +
                         (T == 0 ? " windows " + data + " holds whatever the context (one per token)"
                                 : " distinct windows of " + std::to_string(span) + " tokens in " + data) +
                         " (at most " + std::to_string(starts / static_cast<std::size_t>(batch_size)) + " batches)");
}

double validation_loss(const LoadedModel& lm, const std::string& data, std::int64_t batch_size, std::int64_t batches,
                       std::int64_t T, std::vector<double>& per_batch) {
  const data::MappedTokens file = data::MappedTokens::open(token_file_of(data));
  lm.ids.check_tokens(file.tokens(), data);  // the whole file, before any batch: one line naming both
  const std::size_t span = static_cast<std::size_t>(T) + 1, B = static_cast<std::size_t>(batch_size);
  if (file.size() < span)
    throw std::runtime_error(data + ": " + std::to_string(file.size()) + " tokens, fewer than one sequence of " +
                             std::to_string(span));
  check_window_count(data, batch_size, batches, T);
  const auto tokens = file.tokens();
  const std::size_t windows = B * static_cast<std::size_t>(batches);
  double sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto shown = t0;
  for (std::int64_t batch = 0; batch < batches; ++batch) {
    if (const auto now = std::chrono::steady_clock::now(); now - shown > std::chrono::seconds(10)) {
      shown = now;  // a long evaluation says where it is
      std::cerr << "validation batch " << batch + 1 << " of " << batches << ", "
                << std::lround(std::chrono::duration<double>(now - t0).count()) << " s\n";
    }
    at::Tensor buf = at::empty({batch_size, static_cast<std::int64_t>(span)}, at::TensorOptions().dtype(at::kLong));
    std::int64_t* p = buf.data_ptr<std::int64_t>();
    for (std::size_t row = 0; row < B; ++row) {
      const std::size_t start = window_start(static_cast<std::size_t>(batch) * B + row, windows, file.size(), span);
      for (std::size_t t = 0; t < span; ++t) p[row * span + t] = lm.ids.to_model(tokens[start + t], data);
    }
    buf = buf.to(lm.device);
    double loss;
    {
      AutocastScope autocast(lm.device, lm.precision);
      loss = lm.model->loss(buf.narrow(1, 0, T), buf.narrow(1, 1, T)).item<double>();
    }
    per_batch.push_back(loss);
    sum += loss;
  }
  return sum / static_cast<double>(batches);
}

}  // namespace gaugelab::gpt2
