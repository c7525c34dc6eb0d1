// The kernel check's device layer on a card (check_device.hpp) with the CUDA runtime: every call checked and
// its error reported by name (cudaGetErrorName) and description (cudaGetErrorString), timing by CUDA events.
#include "tests/cuda/check_device.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <sstream>
#include <vector>

namespace gaugelab::kcheck {

namespace {

cudaStream_t g_stream = nullptr;
void* g_flush = nullptr;  // written before each timed run: evicts the operands from the L2 cache
std::size_t g_flush_bytes = 0;

std::string error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw DeviceError(what + ": " + error_text(e));
}

}  // namespace

void device_init() {
  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  if (n < 1) throw DeviceError("cudaGetDeviceCount: no CUDA device");
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  check(cudaStreamCreate(&g_stream), "cudaStreamCreate");
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  g_flush_bytes = std::max<std::size_t>(4 * static_cast<std::size_t>(p.l2CacheSize), 64u << 20);
  check(cudaMalloc(&g_flush, g_flush_bytes), "cudaMalloc(L2 flush buffer)");
}

std::string device_describe() {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  std::ostringstream o;
  o << p.name << ", sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs, "
    << (p.totalGlobalMem >> 20) << " MiB, L2 " << (p.l2CacheSize >> 20) << " MiB, driver " << driver / 1000 << "."
    << (driver % 1000) / 10 << ", runtime " << runtime / 1000 << "." << (runtime % 1000) / 10;
  return o.str();
}

bool device_is_gpu() { return true; }

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc(" + std::to_string(bytes) + " bytes)");
  return p;
}

void device_free(void* p) noexcept {
  if (p != nullptr) (void)cudaFree(p);
}

// Copies between host and device go on the kernels' stream and are waited for: every step of a case is ordered
// on that one stream (a pageable cudaMemcpy may return before its transfer to the device has landed).
void device_upload(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g_stream), "cudaMemcpyAsync host to device");
  check(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize after an upload");
}

void device_download(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, g_stream), "cudaMemcpyAsync device to host");
  check(cudaStreamSynchronize(g_stream), "cudaStreamSynchronize after a download");
}

void device_copy(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g_stream), "cudaMemcpyAsync device to device");
}

void device_fill(void* dst, unsigned char byte, std::size_t bytes) {
  check(cudaMemsetAsync(dst, byte, bytes, g_stream), "cudaMemsetAsync");
}

void* device_stream() { return g_stream; }

void device_sync(const std::string& what) {
  check(cudaStreamSynchronize(g_stream), what + " (at the stream's synchronisation)");
  check(cudaGetLastError(), what + " (cudaGetLastError after the synchronisation)");
}

std::string device_error_text(int code) { return error_text(static_cast<cudaError_t>(code)); }

int device_invalid_value_code() { return static_cast<int>(cudaErrorInvalidValue); }

void check_return(int rc, const std::string& what) {
  if (rc != 0) throw DeviceError(what + ": the launch returned " + device_error_text(rc));
}

void check_launch(int rc, const std::string& what) {
  check_return(rc, what);
  device_sync(what);
}

double device_time_ms(const std::function<void()>& run, const std::function<void()>& prepare, int warmup, int reps) {
  for (int k = 0; k < warmup; ++k) {
    if (prepare) prepare();
    run();
  }
  device_sync("the warm-up runs");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> ms;
  try {
    for (int k = 0; k < reps; ++k) {
      if (prepare) prepare();
      check(cudaMemsetAsync(g_flush, k & 0xff, g_flush_bytes, g_stream), "cudaMemsetAsync(L2 flush)");
      check(cudaEventRecord(start, g_stream), "cudaEventRecord");
      run();
      check(cudaEventRecord(stop, g_stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize (a timed run)");
      float t = 0;
      check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
      ms.push_back(t);
    }
  } catch (...) {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    throw;
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  device_sync("the timed runs");
  return median_of(std::move(ms));
}

}  // namespace gaugelab::kcheck
