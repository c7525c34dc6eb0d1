// Hugging Face GPT-2 interchange: a directory with model.safetensors + config.json.
// Names: wte.weight, wpe.weight, h.{i}.ln_1.{weight,bias}, h.{i}.attn.c_attn.{weight,bias},
// h.{i}.attn.c_proj.*, h.{i}.ln_2.*, h.{i}.mlp.c_fc.*, h.{i}.mlp.c_proj.*, ln_f.* (and lm_head.weight
// when the head is untied). Hugging Face's Conv1D stores every linear weight as [in, out] (x·W + b),
// the transpose of our [out, in]; c_attn packs Q, K, V along its output columns [d, 3d].
// Import accepts a "transformer." prefix on every name and ignores the attn.bias / attn.masked_bias
// buffers older files carry; any other unknown or missing tensor, or a wrong shape, is an error.
#pragma once

#include <memory>
#include <string>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/config.hpp"
#include "gpt2/model/hf_config.hpp"
#include "gpt2/model/json_file.hpp"  // config.json read and written whole
#include "gpt2/model/model.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/model/vocab_ids.hpp"

namespace gaugelab::gpt2 {

/// Writes DIR/model.safetensors and DIR/config.json. Multipliers are merged into the written weights
/// (W = diag(r)·W̄·diag(c), transposed to Conv1D); the model itself is not changed. The vocabulary
/// padding is sliced off; `vocab` goes into config.json (put_vocabulary). A Hugging Face GPT-2 applies no
/// id map, so a compact vocabulary is refused (lay the model over GPT-2 ids first: vocab_layout.hpp).
/// `dtype` is the stored precision (F32 keeps the weights exact).
void export_hf(GPT& model, const std::string& dir, const Vocabulary& vocab,
               safetensors::DType dtype = safetensors::DType::F32);

/// Reads the Hugging Face GPT-2 directory DIR, whose config.json `config` is already read, into a new model on
/// `device` with every multiplier, placed as `lrm` says, at 1. Readers call read_model_dir (model_dir.hpp).
std::unique_ptr<GPT> import_hf(const nlohmann::json& config, const std::string& dir, const LrmPlacement& lrm,
                               c10::Device device);

}  // namespace gaugelab::gpt2
