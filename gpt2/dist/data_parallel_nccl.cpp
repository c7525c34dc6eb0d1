// The NCCL backend of DataParallel: a c10d::ProcessGroupNCCL bound to one GPU.
// Built into the CUDA half (libgaugelab_cuda.so, gpt2/model/cuda_side.hpp), not the tier's library: it names CUDA and NCCL.
//
// ProcessGroupNCCL.hpp includes <nccl.h>, and what it declares depends on that header's version:
// ProcessGroupNCCL::Options holds an ncclConfig_t by value (NCCL 2.30's is 16 bytes larger than
// 2.28's) and Options::create() is inline, so this TU allocates the Options that libtorch_cuda's
// constructor fills in. The header must therefore be the NCCL that libtorch_cuda was built with:
// the torch wheel's nvidia-nccl package, which sits beside torch/include in site-packages, not the
// CUDA toolkit's older copy that Torch's include path (/usr/local/cuda/include) would give.
// We include the wheel's header first through that fixed layout (site-packages/torch/include/../../
// nvidia/nccl/include); its include guard (NCCL_H_) then keeps the toolkit's nccl.h out.
// And we check before creating anything that the header's major.minor is the one libtorch_cuda
// reports (torch::cuda::nccl::version()), so a LibTorch laid out differently fails with one line
// instead of corrupting memory.
#if __has_include(<../../nvidia/nccl/include/nccl.h>) && __has_include(<cuda_runtime_api.h>)
#include <../../nvidia/nccl/include/nccl.h>
#endif
#if __has_include(<nccl.h>) && __has_include(<cuda_runtime_api.h>) && \
    __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>)
#ifndef USE_C10D_NCCL  // Torch's CMake config usually defines it already
#define USE_C10D_NCCL  // the wheel is built with NCCL (torch.__config__: USE_NCCL=ON)
#endif
#define GAUGELAB_HAVE_NCCL 1
#else
#define GAUGELAB_HAVE_NCCL 0
#endif

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#if GAUGELAB_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/cuda/nccl.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace gaugelab::gpt2::detail {

#if GAUGELAB_HAVE_NCCL
/// "2.30" from torch's packed NCCL version (major << 32 | minor << 16 | patch).
static std::string major_minor(std::uint64_t v) {
  return std::to_string(v >> 32) + "." + std::to_string((v >> 16) & 0xffff);
}
#endif

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                    int world, c10::Device device,
                                                    std::chrono::milliseconds timeout) {
#if GAUGELAB_HAVE_NCCL
  const std::uint64_t built = torch::cuda::nccl::version();
  const std::uint64_t header = (std::uint64_t{NCCL_MAJOR} << 32) | (std::uint64_t{NCCL_MINOR} << 16);
  if ((built >> 16) != (header >> 16))
    throw std::runtime_error("NCCL header " + major_minor(header) + " seen at compile time differs from the " +
                             major_minor(built) + " libtorch_cuda was built with (rebuild against the " +
                             "torch wheel's nvidia-nccl headers)");
  const c10::DeviceIndex index = device.has_index() ? device.index() : c10::cuda::current_device();
  c10::cuda::set_device(index);
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  // The watchdog's limit, later than DataParallel's own wait on each work (`timeout`, which throws
  // on expiry): a stuck collective then surfaces as our one-line error, not as the watchdog's abort.
  opts->timeout = timeout + std::chrono::seconds(30);
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, opts);
  pg->setBoundDeviceId(c10::Device(c10::kCUDA, index));
  return pg;
#else
  (void)store, (void)rank, (void)world, (void)device, (void)timeout;
  throw std::runtime_error("this build has no NCCL (LibTorch without CUDA, or no nccl.h)");
#endif
}

}  // namespace gaugelab::gpt2::detail

/// The CUDA half's entry to the above (gpt2/dist/data_parallel.cpp looks it up by this name: detail::MakeNcclBackend).
extern "C" void gaugelab_make_nccl_backend(const c10::intrusive_ptr<c10d::Store>* store, int rank, int world,
                                           c10::Device device, std::int64_t timeout_ms,
                                           c10::intrusive_ptr<c10d::Backend>* out) {
  *out = gaugelab::gpt2::detail::make_nccl_backend(*store, rank, world, device, std::chrono::milliseconds(timeout_ms));
}
