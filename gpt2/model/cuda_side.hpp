// The CUDA half of the GPT-2 tier, a shared library of its own (libgaugelab_cuda.so, built beside gaugelab-torch)
// that a process loads only when it can use it. The wheel's libtorch.so needs libtorch_cuda.so, and loading that
// (its kernels' registration, the CUDA libraries' pages) costs ~0.18 of the ~0.40 CPU-s every LibTorch process
// spends before main() on a machine without a GPU, where nothing uses it: the test run starts ~460 such
// processes. The tier's executables link libtorch_cpu only; everything that names a CUDA API (the caching
// allocator, streams, events, CUDA graphs, our .cu kernels, NCCL) lives in the CUDA half and is reached through
// this interface.
//
// When it loads: at start-up where an NVIDIA driver is visible (/dev/nvidiactl, /proc/driver/nvidia/version,
// /dev/dxg, or GAUGELAB_LOAD_CUDA=1), before anything can ask LibTorch about CUDA (LibTorch decides once per
// process whether CUDA exists: a question asked before libtorch_cuda.so is loaded disables CUDA for the process);
// elsewhere only when asked for (cuda_side(): a CUDA tensor reaching one of our kernels, a test of the half itself);
// parse_device("cuda") then says in one line, as before, that no CUDA device is available, loading nothing.
// GAUGELAB_CUDA_SIDE names the library's file explicitly; GAUGELAB_LOAD_CUDA=0 keeps it out even where a driver is
// (LibTorch then never sees CUDA in that process).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <c10/core/Device.h>
#include <c10/util/intrusive_ptr.h>

#include "gpt2/model/cuda/lm_head_ce_kernel.hpp"
#include "gpt2/model/lrm_weight_bf16.hpp"      // LrmWeightKernels
#include "gpt2/model/residual_layer_norm.hpp"  // AddLayerNormKernels

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

namespace gaugelab::gpt2 {

/// One CUDA graph (at::cuda::CUDAGraph in the CUDA half), captured on the current stream.
class CudaGraph {
 public:
  virtual ~CudaGraph() = default;
  virtual void capture_begin() = 0;
  virtual void capture_end() = 0;
  virtual void replay() = 0;
  /// Ends a capture an exception left open on the current stream (through capture_end while it is still valid,
  /// then cudaStreamEndCapture), and clears CUDA's last error. Never throws.
  virtual void abandon() noexcept = 0;
};

/// While it lives, the current stream is a stream from the pool that starts after what the previous current stream
/// had queued. join() makes the previous stream wait for the side stream's work and current again; destroyed without
/// join() (an exception), it is made current again without waiting.
class CudaSideStream {
 public:
  virtual ~CudaSideStream() = default;
  virtual void join() = 0;
};

/// Our .cu kernels (gpt2/model/cuda/*_kernel.hpp), in the tables their autograd wrappers take.
struct CudaKernels {
  decltype(&cuda::lm_head_ce_rows_bf16) lm_head_ce_rows_bf16 = nullptr;
  LrmWeightKernels lrm_weight{};
  AddLayerNormKernels add_layer_norm{};
};

/// What the caching allocator holds on one device, in bytes.
struct CudaMemory {
  double reserved = 0, reserved_peak = 0, allocated_peak = 0;
};

class CudaSide {
 public:
  virtual ~CudaSide() = default;
  /// CUDA's own count (cudaGetDeviceCount through c10), 0 on error.
  virtual int device_count() const = 0;
  /// The current stream of `device` as a cudaStream_t (the kernels' void* stream).
  virtual void* current_stream(c10::DeviceIndex device) const = 0;
  /// "cudaErrorX (its description, CUDA error N)" for a kernel's return code.
  virtual std::string error_text(int rc) const = 0;
  virtual void synchronize() const = 0;  // the current device
  virtual void empty_cache() const = 0;
  virtual void reset_peak_stats(c10::DeviceIndex device) const = 0;
  virtual CudaMemory memory(c10::DeviceIndex device) const = 0;
  /// cudaMemGetInfo on `device`; throws on a CUDA error.
  virtual void mem_get_info(c10::DeviceIndex device, std::size_t* free, std::size_t* total) const = 0;
  virtual std::unique_ptr<CudaGraph> new_graph() const = 0;
  virtual std::unique_ptr<CudaSideStream> enter_side_stream() const = 0;
  /// Null where the build found no CUDA compiler (GAUGELAB_HAVE_CUDA_KERNELS unset).
  virtual const CudaKernels* kernels() const = 0;
};

/// The CUDA half, loaded on the first call; std::runtime_error (one line: the file tried and dlerror) when it cannot
/// be loaded.
const CudaSide& cuda_side();

/// Our kernels, from the CUDA half (loading it); std::logic_error (one line) where it was built without them.
const CudaKernels& cuda_kernel_table();

/// A symbol of the loaded CUDA half (the dist room's NCCL backend), loading it first; throws as cuda_side().
void* cuda_side_symbol(const char* name);

/// Whether this process can use a CUDA device: false without loading anything where no NVIDIA driver is visible,
/// else the CUDA half loaded and LibTorch asked (at::hasCUDA()). A failed load on a machine with a driver throws.
bool cuda_present();

}  // namespace gaugelab::gpt2
