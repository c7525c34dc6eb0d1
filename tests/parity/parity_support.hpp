// What the parity rows share: seeded inputs drawn on the CPU (so the CPU and CUDA runs of a row see the
// same values), side conditions, and the tensor <-> Eigen copies of gpt2/inspect/layer_tensors.hpp
// (gpt2::to_mat, gpt2::to_vec: float64 CPU copies of a tensor on any device).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/randn.h>
#include <c10/core/Device.h>

#include "gpt2/inspect/layer_tensors.hpp"
#include "tests/parity/parity_table.hpp"

namespace gaugelab::parity {

/// A CPU generator seeded with `seed`: every row draws its inputs from one, on the CPU.
inline at::Generator cpu_generator(std::uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

/// N(0, 1) of `sizes` in `dtype`, drawn on the CPU from `gen`, then copied to `device`.
inline at::Tensor randn_on(at::IntArrayRef sizes, at::Generator& gen, c10::ScalarType dtype, c10::Device device) {
  return at::randn(sizes, gen, at::TensorOptions().dtype(dtype)).to(device);
}

/// A side condition of a row's comparison: throws std::runtime_error(what) unless ok.
inline void require_side(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

}  // namespace gaugelab::parity
