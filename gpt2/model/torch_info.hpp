// LibTorch facts for `gaugelab info` (no LibTorch types in this header, so cli/ stays Torch-free).
#pragma once
#include <string>

namespace gaugelab::gpt2 {
/// Multi-line report: LibTorch version, CUDA compiled/available, device count, intra-op threads.
std::string torch_info();
}  // namespace gaugelab::gpt2
