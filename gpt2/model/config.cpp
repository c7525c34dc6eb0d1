#include "gpt2/model/config.hpp"

#include <cstdint>

#include <sstream>
#include <stdexcept>

namespace gaugelab::gpt2 {

namespace {

constexpr const char* kModeNames[] = {"none", "scalar", "row", "column", "row+column"};
constexpr const char* kSiteNames[] = {"q", "k", "v", "attn_out", "mlp_in", "mlp_out", "lm_head"};

[[noreturn]] void bad(const std::string& msg) { throw std::runtime_error("gpt2 config: " + msg); }

// A choice's word in config.json, read through its table (choices.hpp).
template <class E>
E parse_config_choice(const core::ChoiceTable<E>& table, const std::string& key, const std::string& word) {
  const std::size_t i = core::choice_index(table, word);
  if (i == table.size()) bad(key + " must be one of " + core::choice_list(table) + ", not '" + word + "'");
  return table[i].value;
}

LrmMode parse_mode(const std::string& s) {
  for (int i = 0; i < 5; ++i)
    if (s == kModeNames[i]) return static_cast<LrmMode>(i);
  if (s == "rowcol" || s == "row_column") return LrmMode::row_column;
  if (s == "col") return LrmMode::column;
  bad("unknown multiplier mode '" + s + "' (none, scalar, row, column, row+column)");
}

LrmSite parse_site(const std::string& s) {
  for (int i = 0; i < kLrmSites; ++i)
    if (s == kSiteNames[i]) return static_cast<LrmSite>(i);
  bad("unknown multiplier site '" + s + "' (q, k, v, attn_out, mlp_in, mlp_out, lm_head, all)");
}

// Multipliers one linear map [out, in] gets in mode m.
std::int64_t count_for(LrmMode m, std::int64_t out, std::int64_t in) {
  switch (m) {
    case LrmMode::none: return 0;
    case LrmMode::scalar: return 1;
    case LrmMode::row: return out;
    case LrmMode::column: return in;
    case LrmMode::row_column: return out + in;
  }
  return 0;
}

}  // namespace

const char* lrm_mode_name(LrmMode m) { return kModeNames[static_cast<int>(m)]; }
const char* lrm_site_name(LrmSite s) { return kSiteNames[static_cast<int>(s)]; }
bool lrm_has_row(LrmMode m) { return m == LrmMode::row || m == LrmMode::row_column; }
bool lrm_has_column(LrmMode m) { return m == LrmMode::column || m == LrmMode::row_column; }

bool LrmPlacement::any() const {
  for (LrmMode m : mode)
    if (m != LrmMode::none) return true;
  return false;
}

LrmPlacement LrmPlacement::none() {
  LrmPlacement p;
  p.mode.fill(LrmMode::none);
  return p;
}

LrmPlacement LrmPlacement::parse(const std::string& spec) {
  if (spec == "default") return LrmPlacement{};
  LrmPlacement p = none();
  if (spec == "none" || spec.empty()) return p;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) bad("multiplier item '" + item + "' is not site:mode");
    const std::string site = item.substr(0, colon), mode = item.substr(colon + 1);
    if (site == "all") {
      for (int i = 0; i < kLrmSites - 1; ++i) p.mode[i] = parse_mode(mode);
    } else {
      p[parse_site(site)] = parse_mode(mode);
    }
  }
  return p;
}

std::string LrmPlacement::spec() const {
  if (!any()) return "none";
  std::string out;
  for (int i = 0; i < kLrmSites; ++i) {
    if (mode[i] == LrmMode::none) continue;
    if (!out.empty()) out += ",";
    out += std::string(kSiteNames[i]) + ":" + kModeNames[static_cast<int>(mode[i])];
  }
  return out;
}

std::int64_t ModelConfig::padded_vocab() const {
  return (vocab_size + vocab_multiple - 1) / vocab_multiple * vocab_multiple;
}

void ModelConfig::validate() const {
  // Upper bounds far above any GPT-2 (xl: 48 layers, d 1600, context 1024, 50 257 ids) and below where the
  // sizes' products (padded vocabulary, parameter counts) could overflow int64: a hostile config.json or flag
  // is refused here, before anything is allocated.
  auto in = [](std::int64_t v, std::int64_t lo, std::int64_t hi, const char* what) {
    if (v < lo || v > hi) bad(std::string(what) + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                              "], not " + std::to_string(v));
  };
  in(n_layer, 1, kMaxLayers, "n_layer");
  in(n_head, 1, kMaxWidth, "n_head");
  in(n_embd, 1, kMaxWidth, "n_embd");
  if (n_embd % n_head != 0) bad("n_embd must be a positive multiple of n_head");
  in(block_size, 1, kMaxContext, "block_size");
  in(vocab_size, 1, kMaxVocab, "vocab_size");
  in(vocab_multiple, 1, kMaxVocabMultiple, "vocab_multiple");
  if (!(layer_norm_eps > 0)) bad("layer_norm_eps must be > 0");
  if (!(dropout >= 0 && dropout < 1)) bad("dropout must be in [0, 1)");
  if (tied_head && lrm_has_row(lrm[LrmSite::lm_head]))
    bad("row multipliers on the LM head need an untied head (tied_head false): the token embedding "
        "cannot absorb them on export");
}

std::int64_t ModelConfig::multiplier_count() const {
  const std::int64_t d = n_embd, f = 4 * n_embd;
  std::int64_t per_layer = count_for(lrm[LrmSite::q], d, d) + count_for(lrm[LrmSite::k], d, d) +
                           count_for(lrm[LrmSite::v], d, d) + count_for(lrm[LrmSite::attn_out], d, d) +
                           count_for(lrm[LrmSite::mlp_in], f, d) + count_for(lrm[LrmSite::mlp_out], d, f);
  return n_layer * per_layer + count_for(lrm[LrmSite::lm_head], padded_vocab(), d);
}

nlohmann::json ModelConfig::to_json() const {
  return {{"n_layer", n_layer},   {"n_head", n_head},
          {"n_embd", n_embd},     {"block_size", block_size},
          {"vocab_size", vocab_size}, {"vocab_multiple", vocab_multiple},
          {"layer_norm_eps", layer_norm_eps}, {"dropout", dropout},
          {"tied_head", tied_head}, {"multipliers", lrm.spec()},
          {"bias", bias},         {"gelu", word(gelu)},
          {"qk_norm", word(qk_norm)}};
}

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("model config must be a JSON object");
  ModelConfig c;
  // Sizes must be JSON integers: 4.9 was read as 4, and 1e300 (a float) converted with undefined behaviour.
  auto integer = [](const nlohmann::json& v, const std::string& key) -> std::int64_t {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      bad("key '" + key + "' is out of range");
    if (!v.is_number_integer()) bad("key '" + key + "' must be an integer, not " + v.dump());
    return v.get<std::int64_t>();
  };
  for (const auto& [key, v] : j.items()) {
    try {
      if (key == "n_layer") c.n_layer = integer(v, key);
      else if (key == "n_head") c.n_head = integer(v, key);
      else if (key == "n_embd") c.n_embd = integer(v, key);
      else if (key == "block_size") c.block_size = integer(v, key);
      else if (key == "vocab_size") c.vocab_size = integer(v, key);
      else if (key == "vocab_multiple") c.vocab_multiple = integer(v, key);
      else if (key == "layer_norm_eps") c.layer_norm_eps = v.get<double>();
      else if (key == "dropout") c.dropout = v.get<double>();
      else if (key == "tied_head") c.tied_head = v.get<bool>();
      else if (key == "multipliers") c.lrm = LrmPlacement::parse(v.get<std::string>());
      else if (key == "bias") c.bias = v.get<bool>();  // absent in checkpoints before it existed: true, as they were
      else if (key == "gelu") c.gelu = parse_config_choice(gelu_choices(), key, v.get<std::string>());  // absent: tanh, as they were
      else if (key == "qk_norm") c.qk_norm = parse_config_choice(qk_norm_choices(), key, v.get<std::string>());  // absent: none
      else bad("unknown key '" + key + "'");
    } catch (const nlohmann::json::exception& e) {
      bad("key '" + key + "' has the wrong type (" + std::string(e.what()) + ")");
    }
  }
  c.validate();
  return c;
}

ModelConfig ModelConfig::preset(const std::string& name) {
  ModelConfig c;  // defaults are gpt2 (124M)
  auto set = [&c](std::int64_t l, std::int64_t h, std::int64_t d, std::int64_t t) {
    c.n_layer = l, c.n_head = h, c.n_embd = d, c.block_size = t;
  };
  if (name == "gpt2") set(12, 12, 768, 1024);
  else if (name == "gpt2-medium") set(24, 16, 1024, 1024);
  else if (name == "gpt2-large") set(36, 20, 1280, 1024);
  else if (name == "gpt2-xl") set(48, 25, 1600, 1024);
  else if (name == "tiny") set(4, 4, 256, 256);
  else if (name == "nano") set(2, 2, 64, 64);
  else bad("unknown preset '" + name + "' (gpt2, gpt2-medium, gpt2-large, gpt2-xl, tiny, nano)");
  return c;
}

}  // namespace gaugelab::gpt2
