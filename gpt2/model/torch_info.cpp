#include "gpt2/model/torch_info.hpp"

#include <ATen/Parallel.h>
#include <ATen/Context.h>
#include <torch/version.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

#include <limits>
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

double cuda_peak_memory_gb(int index) {
  if (!at::hasCUDA() || index < 0 || index >= c10::cuda::device_count()) return std::numeric_limits<double>::quiet_NaN();
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  // allocated_bytes is indexed by the allocator's StatType, whose first entry is the aggregate over pools in every
  // 2.x release (the enum moved namespaces across releases; the index did not)
  return static_cast<double>(stats.allocated_bytes[0].peak) / 1e9;
}

}  // namespace gaugelab::gpt2
