#include "gpt2/model/hf_config.hpp"
#include "io/fail_at.hpp"

#include <stdexcept>

namespace gaugelab::gpt2 {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Hugging Face's words for our GELU (config.json "activation_function"): the first row of each value is the one
// written; gelu_pytorch_tanh, the same function, is read too.
const core::ChoiceTable<Gelu>& hf_activation_choices() {
  static const core::ChoiceTable<Gelu> t = {
      {"gelu_new", Gelu::tanh}, {"gelu", Gelu::erf}, {"gelu_pytorch_tanh", Gelu::tanh}};
  return t;
}

std::string describe_sizes(const ModelConfig& c) {
  return "n_layer " + std::to_string(c.n_layer) + ", n_embd " + std::to_string(c.n_embd) + ", n_positions " +
         std::to_string(c.block_size) + ", vocab_size " + std::to_string(c.vocab_size);
}

}  // namespace

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

nlohmann::json hf_config_json(const ModelConfig& c) {
  nlohmann::json j = {{"architectures", {"GPT2LMHeadModel"}},
                      {"model_type", "gpt2"},
                      {"activation_function", core::choice_name(hf_activation_choices(), c.gelu)},
                      {"n_layer", c.n_layer},
                      {"n_head", c.n_head},
                      {"n_embd", c.n_embd},
                      {"n_positions", c.block_size},
                      {"n_ctx", c.block_size},
                      {"n_inner", nullptr},
                      {"vocab_size", c.vocab_size},
                      {"layer_norm_epsilon", c.layer_norm_eps},
                      {"resid_pdrop", c.dropout},
                      {"embd_pdrop", c.dropout},
                      {"attn_pdrop", c.dropout},
                      {"initializer_range", 0.02},
                      {"scale_attn_weights", true},
                      {"scale_attn_by_inverse_layer_idx", false},
                      {"reorder_and_upcast_attn", false},
                      {"tie_word_embeddings", c.tied_head},
                      {"torch_dtype", "float32"}};
  if (c.vocab_size > 50256) j["bos_token_id"] = j["eos_token_id"] = 50256;  // <|endoftext|>
  return j;
}

ModelConfig config_from_hf_json(const nlohmann::json& j, const LrmPlacement& lrm, const std::string& what) {
  if (!j.is_object()) io::fail_at(what, "config is not a JSON object");
  auto integer = [&](const char* key, const char* alt) -> std::int64_t {
    const char* k = j.contains(key) ? key : (alt && j.contains(alt) ? alt : nullptr);
    if (!k) io::fail_at(what, std::string("missing '") + key + "'");
    if (!j[k].is_number_integer()) io::fail_at(what, std::string("'") + k + "' must be an integer");
    return j[k].get<std::int64_t>();
  };
  auto flag = [&](const char* key, bool dflt) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    if (!j[key].is_boolean()) io::fail_at(what, std::string("'") + key + "' must be true or false");
    return j[key].get<bool>();
  };
  if (j.contains("model_type") && j["model_type"] != "gpt2") io::fail_at(what, "model_type is not gpt2");
  ModelConfig c;
  c.n_layer = integer("n_layer", nullptr);
  c.n_head = integer("n_head", nullptr);
  c.n_embd = integer("n_embd", nullptr);
  c.block_size = integer("n_positions", "n_ctx");
  c.vocab_size = integer("vocab_size", nullptr);
  if (j.contains("layer_norm_epsilon")) {
    if (!j["layer_norm_epsilon"].is_number()) io::fail_at(what, "'layer_norm_epsilon' must be a number");
    c.layer_norm_eps = j["layer_norm_epsilon"].get<double>();
  }
  std::string act = "gelu_new";
  if (j.contains("activation_function")) {
    if (!j["activation_function"].is_string()) io::fail_at(what, "'activation_function' must be a string");
    act = j["activation_function"].get<std::string>();
  }
  const std::size_t row = core::choice_index(hf_activation_choices(), act);  // gelu: exact GELU (what a bias-free
  if (row == hf_activation_choices().size())                                 // nanoGPT model exports as)
    io::fail_at(what, "activation_function '" + act + "' is neither GELU tanh (gelu_new) nor exact GELU (gelu)");
  c.gelu = hf_activation_choices()[row].value;
  c.bias = true;  // Hugging Face's GPT-2 always has biases (a model trained without them exports zeros)
  if (!flag("scale_attn_weights", true)) io::fail_at(what, "scale_attn_weights false is not supported");
  if (flag("scale_attn_by_inverse_layer_idx", false)) io::fail_at(what, "scale_attn_by_inverse_layer_idx is not supported");
  if (flag("add_cross_attention", false)) io::fail_at(what, "add_cross_attention is not supported");
  c.tied_head = flag("tie_word_embeddings", true);
  c.dropout = 0.0;
  c.lrm = lrm;
  try {
    c.validate();
  } catch (const std::exception& e) {
    io::fail_at(what, e.what());
  }
  // After validate(): n_embd is bounded there, so 4·n_embd cannot overflow.
  if (j.contains("n_inner") && !j["n_inner"].is_null() &&
      !(j["n_inner"].is_number_integer() && j["n_inner"].get<std::int64_t>() == 4 * c.n_embd))
    io::fail_at(what, "n_inner must be null or 4·n_embd");
  return c;
}

std::map<std::string, const safetensors::TensorView*> hf_tensors_checked(const ModelConfig& c,
                                                                         const safetensors::File& file,
                                                                         const std::string& st_path) {
  std::map<std::string, const safetensors::TensorView*> by_name;  // names without "transformer."
  for (const auto& [name, view] : file.tensors) {
    const std::string n = name.rfind("transformer.", 0) == 0 ? name.substr(12) : name;
    if (ends_with(n, ".attn.bias") || ends_with(n, ".attn.masked_bias")) continue;  // causal-mask buffers
    if (!by_name.emplace(n, &view).second) io::fail_at(st_path, "tensor '" + n + "' appears with and without prefix");
  }
  auto expect = [&](const std::string& name, const std::vector<std::int64_t>& shape) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) io::fail_at(st_path, "tensor '" + name + "' is missing (config.json: " + describe_sizes(c) + ")");
    if (it->second->shape != shape)
      io::fail_at(st_path, "tensor '" + name + "' has shape " + shape_text(it->second->shape) + ", expected " +
                        shape_text(shape) + " (config.json: " + describe_sizes(c) + ")");
  };
  expect("wte.weight", {c.vocab_size, c.n_embd});
  expect("wpe.weight", {c.block_size, c.n_embd});
  for (const std::int64_t l : {std::int64_t{0}, c.n_layer - 1})
    expect("h." + std::to_string(l) + ".attn.c_attn.weight", {c.n_embd, 3 * c.n_embd});
  if (by_name.count("h." + std::to_string(c.n_layer) + ".attn.c_attn.weight"))
    io::fail_at(st_path, "holds more layers than config.json's n_layer " + std::to_string(c.n_layer));
  return by_name;
}

}  // namespace gaugelab::gpt2
