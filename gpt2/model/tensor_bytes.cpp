#include "gpt2/model/tensor_bytes.hpp"

#include <cstring>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

namespace gaugelab::gpt2 {

namespace {
at::ScalarType scalar_type(safetensors::DType d) {
  switch (d) {
    case safetensors::DType::F32: return at::kFloat;
    case safetensors::DType::F16: return at::kHalf;
    case safetensors::DType::BF16: return at::kBFloat16;
  }
  return at::kFloat;
}
}  // namespace

safetensors::TensorData to_tensor_data(const std::string& name, const at::Tensor& t, safetensors::DType dtype) {
  at::NoGradGuard no_grad;
  const at::Tensor c = t.detach().to(at::kCPU, scalar_type(dtype)).contiguous();
  safetensors::TensorData out;
  out.name = name;
  out.dtype = dtype;
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.bytes.resize(c.nbytes());
  if (c.nbytes() > 0) std::memcpy(out.bytes.data(), c.data_ptr(), c.nbytes());
  return out;
}

at::Tensor to_float_tensor(const safetensors::TensorView& v) {
  // The view may be unaligned inside the file buffer: copy into a fresh (aligned) tensor first.
  at::Tensor raw = at::empty(v.shape, at::TensorOptions().dtype(scalar_type(v.dtype)));
  if (v.nbytes > 0) std::memcpy(raw.data_ptr(), v.data, v.nbytes);
  return raw.to(at::kFloat);
}

std::string shape_string(at::IntArrayRef shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace gaugelab::gpt2
