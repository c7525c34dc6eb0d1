// The loop's step RNG: every step reseeds the generators from (seed, step, rank), so no RNG state needs
// checkpointing and a resumed run draws what the uninterrupted one drew.
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include "core/random.hpp"
#include "gpt2/train/step_rng.hpp"

namespace gaugelab::gpt2 {

void reseed_step_rng(std::uint64_t seed, std::int64_t step, int rank, c10::Device device) {
  const std::uint64_t s =
      core::mix_seed(seed ^ 0x5eedULL, static_cast<std::uint64_t>(step) * 65536u + static_cast<std::uint64_t>(rank));
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
  if (device.is_cuda()) {  // the device's own generator draws CUDA dropout masks (and resets its offset)
    at::Generator gen = at::globalContext().defaultGenerator(device);  // a handle sharing the device's generator
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
}
}  // namespace gaugelab::gpt2
