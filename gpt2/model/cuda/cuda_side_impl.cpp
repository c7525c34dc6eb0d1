// The CUDA half itself (libgaugelab_cuda.so; gpt2/model/cuda_side.hpp says why it is apart): every CUDA API the
// tier uses, behind CudaSide. Linked against the whole of LibTorch (libtorch_cuda, c10_cuda, the CUDA runtime) and
// our kernels; nothing of the tier's static library, so that no state exists twice.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#include "gpt2/model/cuda_side.hpp"

namespace gaugelab::gpt2 {

namespace {

// The caching allocator's statistics index their pools by StatType, whose first entry is the aggregate over pools in
// every 2.x release (the enum moved namespaces across releases, so it is not named here).
constexpr std::size_t kAllPools = 0;

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

class Graph final : public CudaGraph {
 public:
  void capture_begin() override {
    stream_ = c10::cuda::getCurrentCUDAStream().stream();  // abandon() ends a capture here without asking CUDA again
    graph_.capture_begin();
  }
  void capture_end() override { graph_.capture_end(); }
  void replay() override { graph_.replay(); }
  // Through the graph's own capture_end while the capture is still valid: that also ends the allocator's routing to
  // the graph's private pool, and the (partial) graph goes with this object. A capture that a CUDA error invalidated
  // makes capture_end throw after the stream left capture (LibTorch releases the pool in reset() where it tracks an
  // abandoned capture; older versions keep it until the process ends). cudaStreamEndCapture directly where the
  // stream is still capturing after that.
  void abandon() noexcept override {
    const cudaStream_t stream = stream_;
    if (stream == nullptr) return;  // no capture began
    if (capturing(stream)) {
      try {
        graph_.capture_end();
      } catch (...) {  // invalidated, or a partial graph that does not instantiate: the stream left capture either way
      }
    }
    if (capturing(stream)) {
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) (void)cudaGraphDestroy(partial);
    }
    (void)cudaGetLastError();  // the capture's error is reported by the caller, not by the next kernel's launch check
  }

 private:
  at::cuda::CUDAGraph graph_;
  cudaStream_t stream_ = nullptr;  // the stream the capture began on
};

class SideStream final : public CudaSideStream {
 public:
  SideStream() : main_(c10::cuda::getCurrentCUDAStream()), side_(c10::cuda::getStreamFromPool()) {
    at::cuda::CUDAEvent ready;
    ready.record(main_);
    ready.block(side_);  // the side stream starts after what the main stream has queued
    guard_.emplace(side_);
  }
  void join() override {
    at::cuda::CUDAEvent done;
    done.record(side_);
    guard_.reset();  // the main stream current again
    done.block(main_);
  }

 private:
  c10::cuda::CUDAStream main_, side_;
  std::optional<c10::cuda::CUDAStreamGuard> guard_;
};

class Side final : public CudaSide {
 public:
  int device_count() const override { return static_cast<int>(c10::cuda::device_count()); }
  void* current_stream(c10::DeviceIndex device) const override {
    return c10::cuda::getCurrentCUDAStream(device).stream();
  }
  std::string error_text(int rc) const override {
    const auto e = static_cast<cudaError_t>(rc);
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ", CUDA error " + std::to_string(rc) + ")";
  }
  void synchronize() const override { c10::cuda::device_synchronize(); }
  void empty_cache() const override { c10::cuda::CUDACachingAllocator::emptyCache(); }
  void reset_peak_stats(c10::DeviceIndex device) const override {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device);
  }
  CudaMemory memory(c10::DeviceIndex device) const override {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
    CudaMemory m;
    m.reserved = static_cast<double>(stats.reserved_bytes[kAllPools].current);
    m.reserved_peak = static_cast<double>(stats.reserved_bytes[kAllPools].peak);
    m.allocated_peak = static_cast<double>(stats.allocated_bytes[kAllPools].peak);
    return m;
  }
  void mem_get_info(c10::DeviceIndex device, std::size_t* free, std::size_t* total) const override {
    const c10::cuda::CUDAGuard guard(device);
    C10_CUDA_CHECK(cudaMemGetInfo(free, total));
  }
  std::unique_ptr<CudaGraph> new_graph() const override { return std::make_unique<Graph>(); }
  std::unique_ptr<CudaSideStream> enter_side_stream() const override { return std::make_unique<SideStream>(); }
  const CudaKernels* kernels() const override {
#ifdef GAUGELAB_HAVE_CUDA_KERNELS
    static const CudaKernels k{
        &cuda::lm_head_ce_rows_bf16,
        {&cuda::lrm_weight_forward, &cuda::lrm_weight_scratch_floats, &cuda::lrm_weight_backward},
        {&cuda::residual_layer_norm_forward, &cuda::residual_layer_norm_scratch_floats,
         &cuda::residual_layer_norm_backward}};
    return &k;
#else
    return nullptr;
#endif
  }
};

}  // namespace

}  // namespace gaugelab::gpt2

/// The entry point the tier's loader looks up (gpt2/model/cuda_side.cpp: kEntry, the interface's version in its name).
extern "C" const gaugelab::gpt2::CudaSide* gaugelab_cuda_side_v1() {
  static const gaugelab::gpt2::Side side;
  return &side;
}
