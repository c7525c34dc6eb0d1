// libFuzzer target: our checkpoint's config.json (ModelConfig::from_json + validate). Refusals must be
// std::runtime_error; an accepted config must have sizes whose products stay inside int64.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "gpt2/model/config.hpp"

namespace gpt2 = gaugelab::gpt2;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    const gpt2::ModelConfig c = gpt2::ModelConfig::from_json(j);
    c.validate();
    if (c.padded_vocab() < c.vocab_size || c.head_dim() < 1) __builtin_trap();
    (void)c.multiplier_count();
    if (gpt2::ModelConfig::from_json(c.to_json()).to_json() != c.to_json()) __builtin_trap();  // round trip
  } catch (const std::runtime_error&) {
  }
  return 0;
}
