// The loop's step RNG (step_rng.cpp).
#pragma once

#include <cstdint>

#include <c10/core/Device.h>

namespace gaugelab::gpt2 {

/// Reseeds the CPU generator and, on a CUDA device, that device's generator (dropout) from (seed, step,
/// rank): no RNG state needs checkpointing, and a resumed run draws what the uninterrupted one drew.
void reseed_step_rng(std::uint64_t seed, std::int64_t step, int rank, c10::Device device);

}  // namespace gaugelab::gpt2
