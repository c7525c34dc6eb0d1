#include "gpt2/model/torch_info.hpp"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "gpt2/model/cuda_side.hpp"

#include <sstream>

namespace gaugelab::gpt2 {

std::string torch_info() {
  std::ostringstream os;
  std::string cuda;  // loads the CUDA half only where a driver is visible
  try {
    cuda = cuda_present() ? "available, devices " + std::to_string(cuda_side().device_count())
                          : "not available, devices 0";
  } catch (const std::exception& e) {  // a driver, but the CUDA half did not load: say why, on this line
    cuda = std::string("not available, devices 0 (") + e.what() + ")";
  }
  os << "libtorch   " << TORCH_VERSION << "\n"
     << "cuda       " << cuda << "\n"
     << "intra-op   " << at::get_num_threads() << " threads\n";
  return os.str();
}

}  // namespace gaugelab::gpt2
