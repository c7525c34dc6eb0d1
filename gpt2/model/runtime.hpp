// Where and how the model runs: device from a string, fp32 or bf16 autocast, LibTorch threads.
// LibTorch's autocast header is heavy, so it stays inside runtime.cpp; this header only needs c10.
#pragma once

#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace gaugelab::gpt2 {

/// Arithmetic of the forward/backward pass. Parameters and optimizer state stay float32 in both.
enum class Precision {
  fp32,  // everything float32
  bf16,  // autocast: matmuls and attention in bfloat16, reductions and the loss in float32
};
Precision parse_precision(const std::string& name);  // "fp32"/"float32", "bf16"/"bfloat16"; throws
const char* precision_name(Precision p);              // "fp32", "bf16"

/// "cpu", "cuda", "cuda:N". Throws std::runtime_error if the device is unknown or not available here.
c10::Device parse_device(const std::string& name);

/// The attention kernel (--attention): sdpa (the fused call, the device's PyTorch picks the kernel), math (our
/// plain-ops path, model.hpp), or one fused SDPA backend alone on CUDA: flash (FlashAttention), efficient
/// (memory-efficient), cudnn (cuDNN attention). Choosing one disables the others in LibTorch's global SDPA
/// settings, so a shape or dtype the kernel cannot take fails loudly instead of falling back; on the CPU only
/// sdpa and math exist. Throws std::invalid_argument for an unknown name or a CUDA-only kernel off CUDA.
void select_attention_backend(const std::string& name, c10::Device device);
/// One line for the settings printout: what runs the attention.
std::string describe_attention_backend(const std::string& name);

/// Sets OpenMP/Eigen (io::apply_threads) and LibTorch's intra-op threads (LibTorch otherwise
/// forces 1); 0 = every core. Returns the count in force.
int apply_torch_threads(int threads);

/// The dtype autocast runs matmuls in on `device`'s type right now; Float when autocast is off there.
c10::ScalarType autocast_compute_dtype(c10::Device device);

/// RAII autocast region for `device` (a no-op for fp32). Nested scopes restore what they found;
/// leaving the outermost one clears autocast's cache of cast weights (as Python's autocast does).
class AutocastScope {
 public:
  AutocastScope(c10::Device device, Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::Float;
};

}  // namespace gaugelab::gpt2
