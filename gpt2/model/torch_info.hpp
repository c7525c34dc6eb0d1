// LibTorch facts for `gaugelab info` (no LibTorch types in this header, so cli/ stays Torch-free).
#pragma once
#include <string>

namespace gaugelab::gpt2 {
/// Multi-line report: LibTorch version, CUDA compiled/available, device count, intra-op threads.
std::string torch_info();
/// The most memory PyTorch's CUDA caching allocator has held allocated on device `index` since the process
/// began, in GB (1e9 bytes; torch.cuda.max_memory_allocated's quantity); NaN without CUDA.
double cuda_peak_memory_gb(int index);
}  // namespace gaugelab::gpt2
