// The Hugging Face side of GPT-2 interchange that needs no LibTorch (so it can be fuzzed on its own):
// config.json <-> ModelConfig, and the check that a safetensors file holds the tensors config.json
// claims, made before any model is allocated (a 528 kB file claiming gpt2-xl sizes once allocated
// 6.8 GB first). interchange.hpp builds import and export on these.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gpt2/model/config.hpp"
#include "gpt2/model/safetensors.hpp"

namespace gaugelab::gpt2 {

/// The Hugging Face config.json of `c` (GPT2LMHeadModel, activation gelu_new, n_positions = block_size).
nlohmann::json hf_config_json(const ModelConfig& c);
/// Our config from a Hugging Face GPT-2 config.json; multipliers from `lrm`, dropout 0 (set it when
/// training). Refuses what our model does not compute (another activation, n_inner ≠ 4·n_embd,
/// unscaled or layer-scaled attention). `what` names the file in errors.
ModelConfig config_from_hf_json(const nlohmann::json& j, const LrmPlacement& lrm, const std::string& what);

/// The GPT-2 tensors of a Hugging Face file by name, the "transformer." prefix removed and the causal-mask
/// buffers (attn.bias, attn.masked_bias) dropped. Checks, before anything is allocated, that the sizes
/// config `c` claims match the tensors present: the embeddings, the first and last layer's c_attn, and no
/// layer beyond n_layer. Throws one line naming `st_path` (and the config's sizes) on a mismatch.
std::map<std::string, const safetensors::TensorView*> hf_tensors_checked(const ModelConfig& c,
                                                                         const safetensors::File& file,
                                                                         const std::string& st_path);

/// "[a, b]" for messages.
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace gaugelab::gpt2
