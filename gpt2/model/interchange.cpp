#include "gpt2/model/interchange.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/tensor_bytes.hpp"

namespace gaugelab::gpt2 {

namespace {

constexpr std::uintmax_t kMaxConfigBytes = 16u << 20;  // a GPT-2 config.json is under 2 KB

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

[[noreturn]] void fail(const std::string& what, const std::string& msg) {
  throw std::runtime_error(what + ": " + msg);
}

// The scale the tied LM head's scalar/column multipliers put on ln_f's output [d] (1 if none).
at::Tensor tied_head_scale(const GPT& m) {
  const LrmLinear::Group& g = m.lm_head.groups[0];
  at::Tensor scale = at::ones({m.config().n_embd}, m.ln_f_weight.options());
  if (g.c.defined()) scale = scale.mul(g.c);
  if (g.s.defined()) scale = scale.mul(g.s);
  return scale;
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read (" + ec.message() + ")");
  if (size > kMaxConfigBytes) fail(path, "too large for a config file (" + std::to_string(size) + " bytes)");
  std::ifstream in(path);
  if (!in) fail(path, "cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("not valid JSON (") + e.what() + ")");
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) fail(path, "cannot create");
    out << j.dump(2) << "\n";
    if (!out.flush()) fail(path, "write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail(path, "cannot rename into place: " + ec.message());
}

nlohmann::json hf_config_json(const ModelConfig& c) {
  nlohmann::json j = {{"architectures", {"GPT2LMHeadModel"}},
                      {"model_type", "gpt2"},
                      {"activation_function", c.gelu == Gelu::erf ? "gelu" : "gelu_new"},
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

namespace {
std::string describe_sizes(const ModelConfig& c) {
  return "n_layer " + std::to_string(c.n_layer) + ", n_embd " + std::to_string(c.n_embd) + ", n_positions " +
         std::to_string(c.block_size) + ", vocab_size " + std::to_string(c.vocab_size);
}
}  // namespace

ModelConfig config_from_hf_json(const nlohmann::json& j, const LrmPlacement& lrm, const std::string& what) {
  if (!j.is_object()) fail(what, "config is not a JSON object");
  auto integer = [&](const char* key, const char* alt) -> std::int64_t {
    const char* k = j.contains(key) ? key : (alt && j.contains(alt) ? alt : nullptr);
    if (!k) fail(what, std::string("missing '") + key + "'");
    if (!j[k].is_number_integer()) fail(what, std::string("'") + k + "' must be an integer");
    return j[k].get<std::int64_t>();
  };
  auto flag = [&](const char* key, bool dflt) {
    if (!j.contains(key) || j[key].is_null()) return dflt;
    if (!j[key].is_boolean()) fail(what, std::string("'") + key + "' must be true or false");
    return j[key].get<bool>();
  };
  if (j.contains("model_type") && j["model_type"] != "gpt2") fail(what, "model_type is not gpt2");
  ModelConfig c;
  c.n_layer = integer("n_layer", nullptr);
  c.n_head = integer("n_head", nullptr);
  c.n_embd = integer("n_embd", nullptr);
  c.block_size = integer("n_positions", "n_ctx");
  c.vocab_size = integer("vocab_size", nullptr);
  if (j.contains("layer_norm_epsilon")) {
    if (!j["layer_norm_epsilon"].is_number()) fail(what, "'layer_norm_epsilon' must be a number");
    c.layer_norm_eps = j["layer_norm_epsilon"].get<double>();
  }
  const std::string act = j.value("activation_function", std::string("gelu_new"));
  if (act == "gelu_new" || act == "gelu_pytorch_tanh") c.gelu = Gelu::tanh;
  else if (act == "gelu") c.gelu = Gelu::erf;  // exact GELU (what a bias-free nanoGPT model exports as)
  else fail(what, "activation_function '" + act + "' is neither GELU tanh (gelu_new) nor exact GELU (gelu)");
  c.bias = true;  // Hugging Face's GPT-2 always has biases (a model trained without them exports zeros)
  if (j.contains("n_inner") && !j["n_inner"].is_null() && j["n_inner"] != 4 * c.n_embd)
    fail(what, "n_inner must be null or 4·n_embd");
  if (!flag("scale_attn_weights", true)) fail(what, "scale_attn_weights false is not supported");
  if (flag("scale_attn_by_inverse_layer_idx", false)) fail(what, "scale_attn_by_inverse_layer_idx is not supported");
  if (flag("add_cross_attention", false)) fail(what, "add_cross_attention is not supported");
  c.tied_head = flag("tie_word_embeddings", true);
  c.dropout = 0.0;
  c.lrm = lrm;
  try {
    c.validate();
  } catch (const std::exception& e) {
    fail(what, e.what());
  }
  return c;
}

void export_hf(GPT& m, const std::string& dir, safetensors::DType dtype) {
  at::NoGradGuard no_grad;
  const ModelConfig& c = m.config();
  if (c.qk_norm != QkNorm::none)
    fail(dir, std::string("a model with QK-norm (") + qk_norm_name(c.qk_norm) +
                  ") has no Hugging Face GPT-2 equivalent; keep our checkpoint");
  std::vector<safetensors::TensorData> out;
  auto add = [&](const std::string& name, const at::Tensor& t) { out.push_back(to_tensor_data(name, t, dtype)); };
  // Hugging Face's GPT-2 has every bias: a model trained without them (nanoGPT's bias=False) exports
  // zeros there, which computes the same function.
  auto bias_or_zeros = [&](const at::Tensor& b, std::int64_t n) {
    return b.defined() ? b : at::zeros({n}, m.wte.options());
  };
  auto linear = [&](const std::string& name, const LrmLinear& l) {  // Conv1D: weight [in, out]
    add(name + ".weight", l.effective_weight().t());
    add(name + ".bias", bias_or_zeros(l.bias, l.out_features()));
  };
  add("wte.weight", m.wte.narrow(0, 0, c.vocab_size));
  add("wpe.weight", m.wpe);
  for (std::size_t i = 0; i < m.h.size(); ++i) {
    const Block& b = m.h[i];
    const std::string pre = "h." + std::to_string(i) + ".";
    add(pre + "ln_1.weight", b.ln_1_weight);
    add(pre + "ln_1.bias", bias_or_zeros(b.ln_1_bias, c.n_embd));
    linear(pre + "attn.c_attn", b.c_attn);
    linear(pre + "attn.c_proj", b.attn_proj);
    add(pre + "ln_2.weight", b.ln_2_weight);
    add(pre + "ln_2.bias", bias_or_zeros(b.ln_2_bias, c.n_embd));
    linear(pre + "mlp.c_fc", b.c_fc);
    linear(pre + "mlp.c_proj", b.mlp_proj);
  }
  if (c.tied_head) {  // the head's scalar/column multipliers scale ln_f's output (GPT::merge_multipliers)
    const at::Tensor scale = tied_head_scale(m);
    add("ln_f.weight", m.ln_f_weight.mul(scale));
    add("ln_f.bias", bias_or_zeros(m.ln_f_bias, c.n_embd).mul(scale));
  } else {
    add("ln_f.weight", m.ln_f_weight);
    add("ln_f.bias", bias_or_zeros(m.ln_f_bias, c.n_embd));
    add("lm_head.weight", m.lm_head.effective_weight().narrow(0, 0, c.vocab_size));
  }
  std::filesystem::create_directories(dir);
  safetensors::write_file(dir + "/model.safetensors", out, {{"format", "pt"}});
  write_json_file(dir + "/config.json", hf_config_json(c));
}

std::unique_ptr<GPT> import_hf(const std::string& dir, const LrmPlacement& lrm, c10::Device device) {
  const std::string cfg_path = dir + "/config.json", st_path = dir + "/model.safetensors";
  const ModelConfig c = config_from_hf_json(read_json_file(cfg_path), lrm, cfg_path);
  const safetensors::File file = safetensors::read_file(st_path);

  std::map<std::string, const safetensors::TensorView*> by_name;  // names without "transformer."
  for (const auto& [name, view] : file.tensors) {
    const std::string n = name.rfind("transformer.", 0) == 0 ? name.substr(12) : name;
    if (ends_with(n, ".attn.bias") || ends_with(n, ".attn.masked_bias")) continue;  // causal-mask buffers
    if (!by_name.emplace(n, &view).second) fail(st_path, "tensor '" + n + "' appears with and without prefix");
  }
  std::set<std::string> used;
  auto take = [&](const std::string& name, std::vector<std::int64_t> shape) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) fail(st_path, "tensor '" + name + "' is missing");
    if (it->second->shape != shape)
      fail(st_path, "tensor '" + name + "' has shape " + shape_string(it->second->shape) + ", expected " +
                        shape_string(shape));
    used.insert(name);
    return to_float_tensor(*it->second);
  };
  // The sizes config.json claims, checked against the tensors present before the model is allocated (a small
  // file claiming gpt2-xl sizes allocated 6.8 GB first): embeddings, and the first and last layer.
  auto expect = [&](const std::string& name, const std::vector<std::int64_t>& shape) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) fail(st_path, "tensor '" + name + "' is missing (config.json: " + describe_sizes(c) + ")");
    if (it->second->shape != shape)
      fail(st_path, "tensor '" + name + "' has shape " + shape_string(it->second->shape) + ", expected " +
                        shape_string(shape) + " (config.json: " + describe_sizes(c) + ")");
  };
  expect("wte.weight", {c.vocab_size, c.n_embd});
  expect("wpe.weight", {c.block_size, c.n_embd});
  for (const std::int64_t l : {std::int64_t{0}, c.n_layer - 1})
    expect("h." + std::to_string(l) + ".attn.c_attn.weight", {c.n_embd, 3 * c.n_embd});
  if (by_name.count("h." + std::to_string(c.n_layer) + ".attn.c_attn.weight"))
    fail(st_path, "holds more layers than config.json's n_layer " + std::to_string(c.n_layer));
  auto model = std::make_unique<GPT>(c, 0, /*initialise=*/false);
  const std::int64_t d = c.n_embd, V = c.vocab_size;
  {
    at::NoGradGuard no_grad;
    auto linear = [&](const std::string& name, LrmLinear& l) {
      l.weight.copy_(take(name + ".weight", {l.in_features(), l.out_features()}).t());
      l.bias.copy_(take(name + ".bias", {l.out_features()}));
    };
    model->wte.narrow(0, 0, V).copy_(take("wte.weight", {V, d}));
    model->wpe.copy_(take("wpe.weight", {c.block_size, d}));
    for (std::size_t i = 0; i < model->h.size(); ++i) {
      Block& b = model->h[i];
      const std::string pre = "h." + std::to_string(i) + ".";
      b.ln_1_weight.copy_(take(pre + "ln_1.weight", {d}));
      b.ln_1_bias.copy_(take(pre + "ln_1.bias", {d}));
      linear(pre + "attn.c_attn", b.c_attn);
      linear(pre + "attn.c_proj", b.attn_proj);
      b.ln_2_weight.copy_(take(pre + "ln_2.weight", {d}));
      b.ln_2_bias.copy_(take(pre + "ln_2.bias", {d}));
      linear(pre + "mlp.c_fc", b.c_fc);
      linear(pre + "mlp.c_proj", b.mlp_proj);
    }
    model->ln_f_weight.copy_(take("ln_f.weight", {d}));
    model->ln_f_bias.copy_(take("ln_f.bias", {d}));
    if (!c.tied_head) model->lm_head.weight.narrow(0, 0, V).copy_(take("lm_head.weight", {V, d}));
    else if (by_name.count("lm_head.weight")) used.insert("lm_head.weight");  // a tied copy: the model ties it anyway
  }
  for (const auto& [name, view] : by_name)
    if (!used.count(name)) fail(st_path, "unexpected tensor '" + name + "' (not part of GPT-2)");
  model->to(device);
  return model;
}

}  // namespace gaugelab::gpt2
