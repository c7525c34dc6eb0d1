// libFuzzer target: the safetensors reader (gpt2/model/safetensors) on arbitrary bytes. It must refuse
// with std::runtime_error or return views that lie inside the buffer.
#include <memory>
#include <stdexcept>
#include <vector>

#include "gpt2/model/safetensors.hpp"

namespace st = gaugelab::gpt2::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto bytes = std::make_shared<const std::vector<std::uint8_t>>(data, data + size);
  try {
    const st::File f = st::parse(bytes, "fuzz.safetensors");
    const std::uint8_t* lo = bytes->data();
    const std::uint8_t* hi = lo + bytes->size();
    for (const auto& [name, v] : f.tensors) {
      if (v.nbytes != static_cast<std::size_t>(v.numel()) * st::dtype_size(v.dtype)) __builtin_trap();
      if (v.nbytes && (v.data < lo || v.data + v.nbytes > hi)) __builtin_trap();
      volatile std::uint8_t sink = 0;
      for (std::size_t i = 0; i < v.nbytes; i += 4096) sink = sink ^ v.data[i];  // touch every page
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
