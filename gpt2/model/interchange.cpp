#include "gpt2/model/interchange.hpp"
#include "io/fail_at.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/tensor_bytes.hpp"
#include "io/atomic_file.hpp"

namespace gaugelab::gpt2 {

namespace {

// The scale the tied LM head's scalar/column multipliers put on ln_f's output [d] (1 if none).
at::Tensor tied_head_scale(const GPT& m) {
  const LrmLinear::Group& g = m.lm_head.groups[0];
  at::Tensor scale = at::ones({m.config().n_embd}, m.ln_f_weight.options());
  if (g.c.defined()) scale = scale.mul(g.c);
  if (g.s.defined()) scale = scale.mul(g.s);
  return scale;
}

}  // namespace

void export_hf(GPT& m, const std::string& dir, const Vocabulary& vocab, safetensors::DType dtype) {
  at::NoGradGuard no_grad;
  const ModelConfig& c = m.config();
  if (vocab.compact())
    io::fail_at(dir, "a compact vocabulary of " + std::to_string(vocab.ids.size()) +
                  " renumbered ids has no Hugging Face GPT-2 form (transformers applies no id map); lay the model "
                  "over GPT-2 ids first");
  nlohmann::json cfg = hf_config_json(c);
  put_vocabulary(cfg, vocab);
  vocabulary_of(cfg, c.vocab_size, dir + "/config.json");  // what a reader will take back
  if (c.qk_norm != QkNorm::none)
    io::fail_at(dir, std::string("a model with QK-norm (") + word(c.qk_norm) +
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
  write_json_file(dir + "/config.json", cfg);
}

std::unique_ptr<GPT> import_hf(const nlohmann::json& config, const std::string& dir, const LrmPlacement& lrm,
                               c10::Device device) {
  const std::string cfg_path = dir + "/config.json", st_path = dir + "/model.safetensors";
  const ModelConfig c = config_from_hf_json(config, lrm, cfg_path);
  const safetensors::File file = safetensors::read_file(st_path);

  // The sizes config.json claims, checked against the tensors present before the model is allocated.
  const auto by_name = hf_tensors_checked(c, file, st_path);
  std::set<std::string> used;
  auto take = [&](const std::string& name, std::vector<std::int64_t> shape) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) io::fail_at(st_path, "tensor '" + name + "' is missing");
    if (it->second->shape != shape)
      io::fail_at(st_path, "tensor '" + name + "' has shape " + shape_string(it->second->shape) + ", expected " +
                        shape_string(shape));
    used.insert(name);
    return to_float_tensor(*it->second);
  };
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
    if (!used.count(name)) io::fail_at(st_path, "unexpected tensor '" + name + "' (not part of GPT-2)");
  model->to(device);
  return model;
}

}  // namespace gaugelab::gpt2
