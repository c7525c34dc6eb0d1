#include "gpt2/model/torch_info.hpp"

#include <ATen/Parallel.h>
#include <ATen/Context.h>
#include <torch/version.h>
#include <c10/cuda/CUDAFunctions.h>

#include <sstream>

namespace gaugelab::gpt2 {

std::string torch_info() {
  std::ostringstream os;
  os << "libtorch   " << TORCH_VERSION << "\n"
     << "cuda       " << (at::hasCUDA() ? "available" : "not available") << ", devices "
     << (at::hasCUDA() ? c10::cuda::device_count() : 0) << "\n"
     << "intra-op   " << at::get_num_threads() << " threads\n";
  return os.str();
}

}  // namespace gaugelab::gpt2
