// libFuzzer target: a Hugging Face export as import sees it before allocating anything — config.json
// parsed into our ModelConfig, model.safetensors parsed, and the sizes config.json claims checked against
// the tensors present. Input: 2 bytes little-endian n, then n bytes of config.json, then the
// safetensors file. Refusals must be std::runtime_error (no JSON library exception may escape).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/model/hf_config.hpp"

namespace gpt2 = gaugelab::gpt2;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t n = std::min<std::size_t>(data[0] | (std::size_t{data[1]} << 8), size - 2);
  const nlohmann::json j = nlohmann::json::parse(data + 2, data + 2 + n, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // read_json_file turns a parse failure into one line itself
  try {
    const gpt2::ModelConfig c = gpt2::config_from_hf_json(j, gpt2::LrmPlacement{}, "config.json");
    auto bytes = std::make_shared<const std::vector<std::uint8_t>>(data + 2 + n, data + size);
    const auto file = gpt2::safetensors::parse(bytes, "model.safetensors");
    const auto tensors = gpt2::hf_tensors_checked(c, file, "model.safetensors");
    if (tensors.empty()) __builtin_trap();  // a checked file holds at least wte, wpe and one layer
  } catch (const std::runtime_error&) {
  }
  return 0;
}
