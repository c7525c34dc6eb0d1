// Tensors to and from the raw little-endian buffers of safetensors.hpp (which knows no LibTorch).
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

#include "gpt2/model/safetensors.hpp"

namespace gaugelab::gpt2 {

/// Copies `t` (any device, any float dtype; detached, made contiguous) into a safetensors entry,
/// converted to `dtype`.
safetensors::TensorData to_tensor_data(const std::string& name, const at::Tensor& t,
                                       safetensors::DType dtype = safetensors::DType::F32);

/// A new float32 CPU tensor with the view's shape and values (F16/BF16 widened exactly).
at::Tensor to_float_tensor(const safetensors::TensorView& v);

/// "[a, b, c]" for messages.
std::string shape_string(at::IntArrayRef shape);

}  // namespace gaugelab::gpt2
