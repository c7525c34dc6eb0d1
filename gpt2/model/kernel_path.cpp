#include "gpt2/model/kernel_path.hpp"

namespace gaugelab::gpt2 {

bool cuda_kernels_built() {
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

bool fused_kernel_runs(KernelPath k, c10::Device device, c10::ScalarType compute) {
  return k == KernelPath::fused && cuda_kernels_built() && device.is_cuda() && compute == c10::ScalarType::BFloat16;
}

}  // namespace gaugelab::gpt2
