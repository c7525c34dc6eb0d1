#include "gpt2/model/vocab_ids.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>
#include <utility>

namespace gaugelab::gpt2 {

namespace {

constexpr const char* kMapKey = "gaugelab_vocab_ids";
constexpr const char* kTrainedKey = "gaugelab_trained_ids";
constexpr const char* kOwnKey = "gaugelab_own_ids";

// A list of distinct non-negative ids under `key` (null or [] = none); ids must be below `below` when it is > 0.
std::vector<std::int64_t> id_list(const nlohmann::json& j, const std::string& key, std::int64_t below,
                                  const std::string& what) {
  if (j.is_null() || (j.is_array() && j.empty())) return {};
  if (!j.is_array()) throw std::runtime_error(what + ": " + key + " is not a list of token ids");
  std::vector<std::int64_t> out;
  std::unordered_set<std::int64_t> seen;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || (below > 0 && v.get<std::int64_t>() >= below))
      throw std::runtime_error(what + ": " + key + " holds " + v.dump() + ", not a token id" +
                               (below > 0 ? " below " + std::to_string(below) : std::string()));
    if (!seen.insert(v.get<std::int64_t>()).second)
      throw std::runtime_error(what + ": " + key + " lists token id " + v.dump() + " twice");
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

}  // namespace

Vocabulary vocabulary_of(const nlohmann::json& config, std::int64_t vocab_size, const std::string& what) {
  Vocabulary v;
  if (!config.is_object()) return v;
  if (config.contains(kMapKey)) {
    v.ids = id_list(config[kMapKey], kMapKey, 0, what);
  } else if (config.contains("trainer") && config["trainer"].is_object() && config["trainer"].contains("vocab_ids")) {
    v.ids = id_list(config["trainer"]["vocab_ids"], "trainer.vocab_ids", 0, what);  // written before the key above
  }
  if (v.compact() && static_cast<std::int64_t>(v.ids.size()) != vocab_size)
    throw std::runtime_error(what + ": the compact vocabulary map lists " + std::to_string(v.ids.size()) +
                             " ids for a model of " + std::to_string(vocab_size) + " token rows");
  if (config.contains(kTrainedKey)) v.trained = id_list(config[kTrainedKey], kTrainedKey, vocab_size, what);
  if (config.contains(kOwnKey)) {
    if (!config[kOwnKey].is_boolean()) throw std::runtime_error(what + ": " + kOwnKey + " is not true or false");
    v.own = config[kOwnKey].get<bool>();
  }
  if (static_cast<int>(v.compact()) + static_cast<int>(!v.trained.empty()) + static_cast<int>(v.own) > 1)
    throw std::runtime_error(what + ": holds more than one of a compact vocabulary map, the trained ids of a model "
                                    "over GPT-2 ids and own ids");
  return v;
}

void put_vocabulary(nlohmann::json& config, const Vocabulary& v) {
  config.erase(kMapKey);
  config.erase(kTrainedKey);
  config.erase(kOwnKey);
  if (v.compact()) config[kMapKey] = v.ids;
  if (!v.trained.empty()) config[kTrainedKey] = v.trained;
  if (v.own) config[kOwnKey] = true;
}

std::string vocabulary_name(std::size_t compact_ids) {
  return compact_ids == 0 ? "no compact map" : "compact, " + std::to_string(compact_ids) + " ids";
}

bool is_vocabulary_key(const std::string& key) { return key == kMapKey || key == kTrainedKey || key == kOwnKey; }

TokenIds::TokenIds(const Vocabulary& vocab, std::int64_t vocab_size, std::string checkpoint)
    : ids_(vocab.ids), vocab_size_(vocab_size), own_(vocab.own), checkpoint_(std::move(checkpoint)) {
  for (std::size_t k = 0; k < ids_.size(); ++k) model_id_of_.emplace(ids_[k], static_cast<std::int64_t>(k));
}

std::int64_t TokenIds::bound() const {
  if (!compact()) return vocab_size_;
  return *std::max_element(ids_.begin(), ids_.end()) + 1;
}

bool TokenIds::contains(std::int64_t id) const {
  return compact() ? model_id_of_.count(id) > 0 : id >= 0 && id < vocab_size_;
}

void TokenIds::refuse(std::int64_t id, const std::string& what) const {
  const std::string ck = "checkpoint " + checkpoint_;
  if (compact())
    throw std::runtime_error(what + ": token id " + std::to_string(id) + " is not among " + ck +
                             "'s compact vocabulary of " + std::to_string(ids_.size()) +
                             " trained ids (--compact-vocab: the GPT-2 ids of its training data)");
  throw std::runtime_error(
      what + ": token id " + std::to_string(id) + " is outside " + ck + "'s vocabulary of " +
      std::to_string(vocab_size_) + " ids" + (own_ ? " (its own tokenizer's, not GPT-2's)" : "") +
      (vocab_size_ < kGpt2Vocab && !own_
           ? ", and it carries no GPT-2 id map (a --compact-vocab checkpoint re-written by an older gaugelab lost "
             "its map: write it again from the trained checkpoint)"
           : ""));
}

std::int64_t TokenIds::to_model(std::int64_t id, const std::string& what) const {
  if (!compact()) {
    if (id < 0 || id >= vocab_size_) refuse(id, what);
    return id;
  }
  const auto it = model_id_of_.find(id);
  if (it == model_id_of_.end()) refuse(id, what);
  return it->second;
}

void TokenIds::check_tokens(std::span<const std::uint16_t> tokens, const std::string& data) const {
  std::vector<char> readable(65536, 0);  // indexed by the token file's uint16 ids
  for (std::int64_t id = 0; id < 65536; ++id) readable[static_cast<std::size_t>(id)] = contains(id) ? 1 : 0;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (!readable[tokens[i]]) refuse(tokens[i], "data " + data + " at position " + std::to_string(i));
}

}  // namespace gaugelab::gpt2
