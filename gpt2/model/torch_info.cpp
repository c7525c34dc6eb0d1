#include "gpt2/model/torch_info.hpp"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "gpt2/model/cuda_side.hpp"

#include <sstream>

namespace gaugelab::gpt2 {

std::string torch_info() {
  std::ostringstream os;
  const bool cuda = cuda_present();  // loads the CUDA half only where a driver is visible
  os << "libtorch   " << TORCH_VERSION << "\n"
     << "cuda       " << (cuda ? "available" : "not available") << ", devices "
     << (cuda ? cuda_side().device_count() : 0) << "\n"
     << "intra-op   " << at::get_num_threads() << " threads\n";
  return os.str();
}

}  // namespace gaugelab::gpt2
