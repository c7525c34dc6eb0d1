#include "gpt2/model/runtime.hpp"

#include <stdexcept>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "gpt2/model/cuda_side.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

namespace {
thread_local bool t_emulating_bf16 = false;  // autocast's own state is per thread too
}  // namespace

bool bf16_emulation_enabled() { return t_emulating_bf16; }

c10::Device parse_device(const std::string& name) {
  c10::Device dev(c10::DeviceType::CPU);
  try {
    dev = c10::Device(name);
  } catch (const std::exception&) {
    throw io::UsageError("unknown device '" + name + "' (cpu, cuda, cuda:N)");
  }
  if (dev.is_cpu()) return dev;
  if (!dev.is_cuda()) throw io::UsageError("device '" + name + "' is not supported (cpu, cuda, cuda:N)");
  // without a visible driver nothing is loaded to say so; with one, the CUDA half is loaded and LibTorch asked
  if (!cuda_present()) throw std::runtime_error("device '" + name + "' requested but no CUDA device is available");
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
  if (precision == Precision::bf16_emulated) {
    emulating_ = true;
    prev_emulating_ = t_emulating_bf16;
    t_emulating_bf16 = true;
    return;
  }
  active_ = true;
  type_ = device.type();
  prev_enabled_ = at::autocast::is_autocast_enabled(type_);
  prev_dtype_ = at::autocast::get_autocast_dtype(type_);
  at::autocast::set_autocast_enabled(type_, true);
  at::autocast::set_autocast_dtype(type_, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (emulating_) t_emulating_bf16 = prev_emulating_;
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(type_, prev_enabled_);
  at::autocast::set_autocast_dtype(type_, prev_dtype_);
}

void select_attention_backend(Attention kernel, c10::Device device) {
  const bool fused_one = kernel != Attention::sdpa && kernel != Attention::math;
  if (fused_one && !device.is_cuda())
    throw std::invalid_argument(std::string("--attention ") + word(kernel) + " is a CUDA kernel; on " + device.str() +
                                " use sdpa or math");
  at::Context& ctx = at::globalContext();
  const bool all = !fused_one;  // sdpa and math leave PyTorch's own choice among every backend
  ctx.setSDPUseFlash(all || kernel == Attention::flash);
  ctx.setSDPUseMemEfficient(all || kernel == Attention::efficient);
  ctx.setSDPUseMath(all);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  ctx.setSDPUseCuDNN(all || kernel == Attention::cudnn);
#else
  if (kernel == Attention::cudnn) throw std::invalid_argument("--attention cudnn needs PyTorch >= 2.3");
#endif
}

std::string describe_attention_backend(Attention kernel) {
  switch (kernel) {
    case Attention::math: return "math (plain ops)";
    case Attention::sdpa: return "sdpa (fused; the kernel is the device PyTorch's choice)";
    default: return std::string(word(kernel)) + " (the only SDPA backend enabled)";
  }
}

}  // namespace gaugelab::gpt2
