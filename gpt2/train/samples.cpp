#include "gpt2/train/samples.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <filesystem>
#include <fstream>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>

#include "gpt2/model/safetensors.hpp"
#include "io/atomic_file.hpp"
#include "io/stop_signal.hpp"

namespace gaugelab::gpt2 {

std::string train_samples_path(const std::string& out) { return (std::filesystem::path(out) / "samples.txt").string(); }

void keep_samples_up_to(const std::string& path, std::int64_t step) {
  std::vector<std::string> kept;
  {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      long long s = 0;
      if (std::sscanf(line.c_str(), "step %lld:", &s) == 1 && s <= step) kept.push_back(line);
    }
  }
  if (kept.empty() && !std::filesystem::exists(path)) return;
  std::string text;
  for (const std::string& l : kept) text += l + "\n";
  // Through a temporary file: a full disk leaves the old samples, not an empty file.
  io::write_atomically(path, text.data(), text.size(), path);
}

void append_sample_line(const std::string& path, const std::string& line) {
  io::append_text(path, line + "\n", path);
}

std::vector<std::int64_t> greedy_continue(GPT& model, const std::vector<std::int64_t>& prompt, std::int64_t tokens) {
  at::NoGradGuard no_grad;
  const bool was_training = model.training();
  model.train(false);
  std::vector<std::int64_t> ctx = prompt, out;
  const auto block = static_cast<std::size_t>(model.config().block_size);
  // A stop (SIGTERM/SIGINT during training) ends the sample where it is: the step's checkpoint comes next.
  for (std::int64_t i = 0; i < tokens && !ctx.empty() && io::stop_requested() == 0; ++i) {
    const std::size_t start = ctx.size() > block ? ctx.size() - block : 0;
    std::vector<std::int64_t> window(ctx.begin() + static_cast<std::ptrdiff_t>(start), ctx.end());
    const at::Tensor idx =
        at::from_blob(window.data(), {1, static_cast<std::int64_t>(window.size())}, at::kLong).clone().to(model.device());
    const at::Tensor logits = model.logits(idx);  // [1, T, V]
    const std::int64_t next = logits[0][static_cast<std::int64_t>(window.size()) - 1].argmax().item<std::int64_t>();
    ctx.push_back(next);
    out.push_back(next);
  }
  model.train(was_training);
  return out;
}

std::string sample_line(std::int64_t step, const std::vector<std::int64_t>& prompt,
                        const std::vector<std::int64_t>& continuation, const std::vector<std::int32_t>& vocab_ids,
                        const data::Gpt2Tokenizer* tok) {
  auto text = [&](const std::vector<std::int64_t>& ids) {
    std::vector<data::TokenId> g;
    for (const std::int64_t id : ids)
      g.push_back(static_cast<data::TokenId>(vocab_ids.empty() ? id : vocab_ids[static_cast<std::size_t>(id)]));
    std::string s;
    if (tok != nullptr) {
      s = tok->decode(g);
    } else {
      for (const data::TokenId id : g) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
      }
      s = "[" + s + "]";
    }
    std::string esc;
    for (const char c : s) esc += c == '\n' ? std::string("\\n") : std::string(1, c);
    return esc;
  };
  return "step " + std::to_string(step) + ": " + text(prompt) + "|" + text(continuation);
}

}  // namespace gaugelab::gpt2
