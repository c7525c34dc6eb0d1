// Where and how the model runs: device from a string, fp32, bf16 autocast or emulated bf16, LibTorch threads.
// LibTorch's autocast header is heavy, so it stays inside runtime.cpp; this header only needs c10.
#pragma once

#include <string>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include "gpt2/model/choices.hpp"

namespace gaugelab::gpt2 {

// Precision and a regime's words (precision_words: the regime and its path): choices.hpp.

/// Whether this thread's model code emulates bf16 at its matmuls now (inside an AutocastScope for
/// Precision::bf16_emulated). Read by the model where it forms a matmul (bf16_round.hpp's emulate_bf16).
bool bf16_emulation_enabled();

/// "cpu", "cuda", "cuda:N". Throws std::runtime_error if the device is unknown or not available here.
c10::Device parse_device(const std::string& name);

/// The attention kernel (--attention, choices.hpp): sdpa (the fused call, the device's PyTorch picks the kernel),
/// math (our plain-ops path, model.hpp), or one fused SDPA backend alone on CUDA: flash (FlashAttention), efficient
/// (memory-efficient), cudnn (cuDNN attention). Choosing one disables the others in LibTorch's global SDPA
/// settings, so a shape or dtype the kernel cannot take fails loudly instead of falling back; on the CPU only
/// sdpa and math exist. Throws std::invalid_argument for a CUDA-only kernel off CUDA.
void select_attention_backend(Attention kernel, c10::Device device);
/// One line for the settings printout: what runs the attention.
std::string describe_attention_backend(Attention kernel);

/// Sets OpenMP/Eigen (io::apply_threads) and LibTorch's intra-op threads (LibTorch otherwise
/// forces 1); 0 = every core. Returns the count in force.
int apply_torch_threads(int threads);

/// The dtype autocast runs matmuls in on `device`'s type right now; Float when autocast is off there.
c10::ScalarType autocast_compute_dtype(c10::Device device);

/// RAII autocast region for `device` (a no-op for fp32). Nested scopes restore what they found;
/// leaving the outermost one clears autocast's cache of cast weights (as Python's autocast does).
/// For Precision::bf16_emulated it turns this thread's bf16 emulation on instead (autocast stays off).
class AutocastScope {
 public:
  AutocastScope(c10::Device device, Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool emulating_ = false;
  bool prev_emulating_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  bool prev_enabled_ = false;
  c10::ScalarType prev_dtype_ = c10::ScalarType::Float;
};

}  // namespace gaugelab::gpt2
