// A checkpoint's vocabulary beside its weights, and the one translation of token ids every reader shares.
// Files and users speak GPT-2 ids; a --compact-vocab model numbers its K token rows 0..K-1, and ids[k] is the
// GPT-2 id of model id k. A model of fewer rows than GPT-2's without that map speaks its own tokenizer's ids
// (an imported Hugging Face model, train --vocab-size), and says so, or it is a compact model whose map was
// lost. Every writer of a model directory (the trainer, inspect --write-canonical, export, import,
// merge-models) stores a Vocabulary through put_vocabulary, and every reader takes it back through
// vocabulary_of; the model verbs, inspect and the landscape verbs pair a model with token ids through
// TokenIds, which refuses in one line, naming both, a token the model cannot read.
//   config.json "gaugelab_vocab_ids":   [K] the compact map (our checkpoints; older trainer checkpoints kept it
//                                        as trainer.vocab_ids, still read)
//   config.json "gaugelab_trained_ids": the ids a model laid over GPT-2's 50 257 (export --vocab full) was
//                                        trained on; the other rows are 0
//   config.json "gaugelab_own_ids":     true: the rows are the ids of the model's own tokenizer, not GPT-2's
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace gaugelab::gpt2 {

inline constexpr std::int64_t kGpt2Vocab = 50257;  // GPT-2's tokenizer: ids 0..50256

struct Vocabulary {
  std::vector<std::int64_t> ids;      // [K] GPT-2 id of model id k (--compact-vocab); empty: rows are the data's ids
  std::vector<std::int64_t> trained;  // a model laid over GPT-2 ids from a compact one: the ids its data had
  bool own = false;                   // its rows are its own tokenizer's ids (no map, and none lost)
  bool compact() const { return !ids.empty(); }
};

/// The vocabulary a config.json (ours or a Hugging Face export) records for a model of `vocab_size` token
/// rows. Throws one line naming `what` when a list is not what it claims: the map not one distinct
/// non-negative id per row, trained ids not distinct rows of the model, two kinds at once.
Vocabulary vocabulary_of(const nlohmann::json& config, std::int64_t vocab_size, const std::string& what);
/// Writes `v` into `config` (the keys above; none for a model over its data's ids): the one place a writer
/// records a vocabulary. Replaces any vocabulary keys already there.
void put_vocabulary(nlohmann::json& config, const Vocabulary& v);
/// True for the config.json keys put_vocabulary owns (a writer's own keys must not be one).
bool is_vocabulary_key(const std::string& key);

/// "compact, K ids", or "no compact map" for K = 0: a vocabulary in a message naming two of them.
std::string vocabulary_name(std::size_t compact_ids);

/// How one model reads token ids: the ids files and users give (GPT-2's, or the model's own tokenizer's)
/// against its token rows. Every refusal is one line naming the checkpoint and what gave the id.
class TokenIds {
 public:
  TokenIds() = default;
  /// `vocab_size` the model's token rows, `checkpoint` its directory (named in errors).
  TokenIds(const Vocabulary& vocab, std::int64_t vocab_size, std::string checkpoint);

  bool compact() const { return !ids_.empty(); }
  /// The compact map (empty for a model over its data's ids).
  const std::vector<std::int64_t>& ids() const { return ids_; }
  /// The bound of the ids users give: the vocabulary, or for a compact model 1 + its largest GPT-2 id.
  std::int64_t bound() const;
  /// True if GPT-2 id (or data id) `id` has a row in the model.
  bool contains(std::int64_t id) const;
  /// The model id of `id`; one line naming `what` and the checkpoint when the model has no row for it.
  std::int64_t to_model(std::int64_t id, const std::string& what) const;
  /// Model id -> the id users see.
  std::int64_t to_gpt2(std::int64_t model_id) const {
    return compact() ? ids_.at(static_cast<std::size_t>(model_id)) : model_id;
  }
  /// Every token of the token file `data` has a row, else one line naming the data, the first such token
  /// and its position, and the checkpoint.
  void check_tokens(std::span<const std::uint16_t> tokens, const std::string& data) const;

 private:
  [[noreturn]] void refuse(std::int64_t id, const std::string& what) const;
  std::vector<std::int64_t> ids_;
  std::unordered_map<std::int64_t, std::int64_t> model_id_of_;  // GPT-2 id -> model id (compact only)
  std::int64_t vocab_size_ = 0;
  bool own_ = false;
  std::string checkpoint_;
};

}  // namespace gaugelab::gpt2
