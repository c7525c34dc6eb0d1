#include "gpt2/model/vocab_layout.hpp"

#include <stdexcept>
#include <string>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/count_nonzero.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/index_copy.h>
#include <ATen/ops/index_select.h>

namespace gaugelab::gpt2 {

namespace {

at::Tensor index_tensor(const std::vector<std::int64_t>& ids) {
  std::vector<std::int64_t> idv = ids;
  return at::from_blob(idv.data(), {static_cast<std::int64_t>(idv.size())}, at::kLong).clone();
}

// Copies every parameter of `from` into `to` (same architecture but the vocabulary); token rows
// [padded, d] go through `rows(src, dst)`.
template <typename Rows>
void copy_with_rows(GPT& from, GPT& to, Rows rows) {
  at::NoGradGuard no_grad;
  auto src = from.named_parameters();
  auto dst = to.named_parameters();
  if (src.size() != dst.size()) throw std::logic_error("vocab_layout: parameter lists differ");
  for (std::size_t i = 0; i < src.size(); ++i) {
    const auto& [name, a] = src[i];
    at::Tensor& b = dst[i].second;
    if (dst[i].first != name) throw std::logic_error("vocab_layout: parameter order differs at " + name);
    if (a.dim() == 2 && a.size(0) == from.config().padded_vocab() && b.size(0) == to.config().padded_vocab() &&
        (name == "wte.weight" || name == "lm_head.weight")) {
      b.zero_();
      rows(a, b);
    } else if (a.sizes() == b.sizes()) {
      b.copy_(a);
    } else {
      throw std::logic_error("vocab_layout: unexpected shape of " + name);
    }
  }
  if (to.config().tied_head) to.lm_head.weight = to.wte;
}

}  // namespace

std::unique_ptr<GPT> select_vocab_rows(GPT& full, const std::vector<std::int64_t>& ids) {
  for (const std::int64_t id : ids)
    if (id < 0 || id >= full.config().vocab_size)
      throw std::invalid_argument("select_vocab_rows: id " + std::to_string(id) + " is outside the model's " +
                                  std::to_string(full.config().vocab_size) + " ids");
  ModelConfig small = full.config();
  small.vocab_size = static_cast<std::int64_t>(ids.size());
  auto out = std::make_unique<GPT>(small, 0, /*initialise=*/false);
  const at::Tensor index = index_tensor(ids);
  copy_with_rows(full, *out, [&](const at::Tensor& a, at::Tensor& b) {
    b.narrow(0, 0, small.vocab_size).copy_(a.index_select(0, index));
  });
  return out;
}

std::unique_ptr<GPT> expand_to_gpt2_vocab(GPT& compact, const std::vector<std::int64_t>& ids, std::int64_t gpt2_vocab) {
  const ModelConfig& c = compact.config();
  if (static_cast<std::int64_t>(ids.size()) != c.vocab_size)
    throw std::invalid_argument("expand_to_gpt2_vocab: " + std::to_string(ids.size()) + " ids for a vocabulary of " +
                                std::to_string(c.vocab_size));
  for (const std::int64_t id : ids)
    if (id < 0 || id >= gpt2_vocab)
      throw std::invalid_argument("expand_to_gpt2_vocab: id " + std::to_string(id) + " is not a GPT-2 id");
  ModelConfig wide = c;
  wide.vocab_size = gpt2_vocab;
  auto out = std::make_unique<GPT>(wide, 0, /*initialise=*/false);
  const at::Tensor index = index_tensor(ids);
  copy_with_rows(compact, *out, [&](const at::Tensor& a, at::Tensor& b) {
    b.index_copy_(0, index, a.narrow(0, 0, c.vocab_size));
  });
  return out;
}

std::unique_ptr<GPT> restore_compact(GPT& full, const std::vector<std::int64_t>& trained) {
  const ModelConfig& c = full.config();
  if (trained.empty()) return nullptr;
  std::vector<char> kept(static_cast<std::size_t>(c.vocab_size), 0);
  for (const std::int64_t id : trained) {
    if (id < 0 || id >= c.vocab_size) return nullptr;
    kept[static_cast<std::size_t>(id)] = 1;
  }
  std::vector<std::int64_t> others;
  for (std::int64_t id = 0; id < c.vocab_size; ++id)
    if (!kept[static_cast<std::size_t>(id)]) others.push_back(id);
  at::NoGradGuard no_grad;
  const at::Tensor index = index_tensor(others).to(full.wte.device());
  auto zero = [&](const at::Tensor& rows) {  // rows [padded, d]: those outside `trained` all 0
    return others.empty() || rows.index_select(0, index).count_nonzero().item<std::int64_t>() == 0;
  };
  if (!zero(full.wte) || (!c.tied_head && !zero(full.lm_head.weight))) return nullptr;
  return select_vocab_rows(full, trained);
}

}  // namespace gaugelab::gpt2
