// GPT-2 ids against a --compact-vocab model's ids. Files and users speak GPT-2 ids; a compact model numbers its
// K token rows 0..K-1, and vocab_ids[k] (stored_vocab_ids, checkpoint.hpp) is the GPT-2 id of model id k. The one
// translation the model verbs (use/LoadedModel) and inspect's layer-input reader share.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace gaugelab::gpt2 {

/// GPT-2 id -> model id, the inverse of vocab_ids (empty for a model over the full vocabulary).
inline std::unordered_map<std::int64_t, std::int64_t> model_ids_of(const std::vector<std::int64_t>& vocab_ids) {
  std::unordered_map<std::int64_t, std::int64_t> m;
  for (std::size_t k = 0; k < vocab_ids.size(); ++k) m.emplace(vocab_ids[k], static_cast<std::int64_t>(k));
  return m;
}

/// The model id of GPT-2 id `id`: itself when vocab_ids is empty; for a compact model its row, or one line naming
/// `what` when the id is not in its vocabulary. `model_id_of` = model_ids_of(vocab_ids).
inline std::int64_t to_model_id(std::int64_t id, const std::vector<std::int64_t>& vocab_ids,
                                const std::unordered_map<std::int64_t, std::int64_t>& model_id_of, const std::string& what) {
  if (vocab_ids.empty()) return id;
  const auto it = model_id_of.find(id);
  if (it == model_id_of.end())
    throw std::runtime_error(what + ": token id " + std::to_string(id) + " is not in the model's compact vocabulary (" +
                             std::to_string(vocab_ids.size()) + " ids seen in its training data)");
  return it->second;
}

}  // namespace gaugelab::gpt2
