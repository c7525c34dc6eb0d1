#include "gpt2/model/checkpoint.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <ATen/core/grad_mode.h>

#include "gpt2/model/json_file.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/model/tensor_bytes.hpp"

namespace gaugelab::gpt2 {

void save_checkpoint(const std::string& dir, GPT& model, const Vocabulary& vocab, const nlohmann::json& extra) {
  if (!extra.is_object()) throw std::invalid_argument("save_checkpoint: extra must be a JSON object");
  nlohmann::json cfg = {{"format", kCheckpointFormat}, {"version", kCheckpointVersion},
                        {"model", model.config().to_json()}};
  nlohmann::json vocab_keys = nlohmann::json::object();
  put_vocabulary(vocab_keys, vocab);
  vocabulary_of(vocab_keys, model.config().vocab_size, dir + "/config.json");  // what a reader will take back
  cfg.update(vocab_keys);
  for (const auto& [key, value] : extra.items()) {
    if (cfg.contains(key) || is_vocabulary_key(key))
      throw std::invalid_argument("save_checkpoint: extra key '" + key + "' is reserved");
    cfg[key] = value;
  }
  std::vector<safetensors::TensorData> tensors;
  model.visit([&](const std::string& name, at::Tensor& t, ParamRole) { tensors.push_back(to_tensor_data(name, t)); });
  std::filesystem::create_directories(dir);
  safetensors::write_file(dir + "/model.safetensors", tensors, {{"format", kCheckpointFormat}});
  write_json_file(dir + "/config.json", cfg);
}

bool is_checkpoint_config(const nlohmann::json& j) {
  return j.is_object() && j.contains("format") && j["format"] == kCheckpointFormat;
}

std::unique_ptr<GPT> checkpoint_model(const nlohmann::json& config, const std::string& dir, c10::Device device) {
  const std::string cfg_path = dir + "/config.json", st_path = dir + "/model.safetensors";
  if (!config.is_object() || config.value("format", std::string()) != kCheckpointFormat)
    throw std::runtime_error(cfg_path + ": not a gaugelab-gpt2 checkpoint (no \"format\": \"gaugelab-gpt2\")");
  if (config.value("version", 0) != kCheckpointVersion)
    throw std::runtime_error(cfg_path + ": checkpoint version " + config.value("version", nlohmann::json()).dump() +
                             " is not the supported " + std::to_string(kCheckpointVersion));
  if (!config.contains("model")) throw std::runtime_error(cfg_path + ": no \"model\" section");
  ModelConfig mc;
  try {
    mc = ModelConfig::from_json(config["model"]);
  } catch (const std::exception& e) {
    throw std::runtime_error(cfg_path + ": " + e.what());
  }
  const safetensors::File file = safetensors::read_file(st_path);
  auto model = std::make_unique<GPT>(mc, 0, /*initialise=*/false);
  std::size_t used = 0;
  {
    at::NoGradGuard no_grad;
    model->visit([&](const std::string& name, at::Tensor& t, ParamRole) {
      const safetensors::TensorView& v = file.at(name);
      if (!t.sizes().equals(v.shape))
        throw std::runtime_error(st_path + ": tensor '" + name + "' has shape " + shape_string(v.shape) +
                                 ", the config needs " + shape_string(t.sizes()));
      t.copy_(to_float_tensor(v));
      ++used;
    });
  }
  if (used != file.tensors.size())
    for (const auto& [name, v] : file.tensors) {
      bool known = false;
      model->visit([&](const std::string& n, at::Tensor&, ParamRole) { known |= n == name; });
      if (!known) throw std::runtime_error(st_path + ": unexpected tensor '" + name + "' for this config");
    }
  model->to(device);
  return model;
}

std::string describe_model(GPT& m) {
  const ModelConfig& c = m.config();
  char params[64];
  std::snprintf(params, sizeof params, "%.1fM", static_cast<double>(m.num_parameters(false)) / 1e6);
  std::ostringstream os;
  os << c.n_layer << " layers, " << c.n_head << " heads, d " << c.n_embd << ", context " << c.block_size << ", vocab "
     << c.vocab_size << " (padded " << c.padded_vocab() << "); " << params << " parameters + "
     << m.num_parameters(true) - m.num_parameters(false) << " multipliers (" << c.lrm.spec() << ")"
     << (c.tied_head ? "" : ", untied head");
  return os.str();
}

}  // namespace gaugelab::gpt2
