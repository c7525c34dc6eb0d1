#include "gpt2/model/kernel_path.hpp"

#include <stdexcept>

namespace gaugelab::gpt2 {

bool cuda_kernels_built() {
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

KernelPath parse_kernel_path(const std::string& word, const std::string& what) {
  if (word == "fused") return KernelPath::fused;
  if (word == "aten") return KernelPath::aten;
  throw std::invalid_argument(what + " '" + word + "': expected fused or aten");
}

bool fused_kernel_runs(KernelPath k, c10::Device device, c10::ScalarType compute) {
  return k == KernelPath::fused && cuda_kernels_built() && device.is_cuda() && compute == c10::ScalarType::BFloat16;
}

}  // namespace gaugelab::gpt2
