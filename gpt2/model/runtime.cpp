#include "gpt2/model/runtime.hpp"

#include <stdexcept>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

Precision parse_precision(const std::string& name) {
  if (name == "fp32" || name == "float32") return Precision::fp32;
  if (name == "bf16" || name == "bfloat16") return Precision::bf16;
  throw io::UsageError("unknown precision '" + name + "' (fp32, bf16)");
}

const char* precision_name(Precision p) { return p == Precision::fp32 ? "fp32" : "bf16"; }

c10::Device parse_device(const std::string& name) {
  c10::Device dev(c10::DeviceType::CPU);
  try {
    dev = c10::Device(name);
  } catch (const std::exception&) {
    throw io::UsageError("unknown device '" + name + "' (cpu, cuda, cuda:N)");
  }
  if (dev.is_cpu()) return dev;
  if (!dev.is_cuda()) throw io::UsageError("device '" + name + "' is not supported (cpu, cuda, cuda:N)");
  if (!at::hasCUDA()) throw std::runtime_error("device '" + name + "' requested but no CUDA device is available");
  return dev;
}

int apply_torch_threads(int threads) {
  const int n = io::apply_threads(threads);
  at::set_num_threads(n);
  return n;
}

c10::ScalarType autocast_compute_dtype(c10::Device device) {
  return at::autocast::is_autocast_enabled(device.type()) ? at::autocast::get_autocast_dtype(device.type())
                                                          : at::kFloat;
}

AutocastScope::AutocastScope(c10::Device device, Precision precision) {
  if (precision == Precision::fp32) return;
  active_ = true;
  type_ = device.type();
  prev_enabled_ = at::autocast::is_autocast_enabled(type_);
  prev_dtype_ = at::autocast::get_autocast_dtype(type_);
  at::autocast::set_autocast_enabled(type_, true);
  at::autocast::set_autocast_dtype(type_, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(type_, prev_enabled_);
  at::autocast::set_autocast_dtype(type_, prev_dtype_);
}

}  // namespace gaugelab::gpt2
