// The kernel check's device layer: memory, copies, synchronisation, error names and timing, in plain C++
// declarations. kernel_check.cu implements it with the CUDA runtime (the program run on a card);
// check_device_host.cpp with host memory and a clock (the harness's dry run on the CPU, tests/cuda/README.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gaugelab::kcheck {

/// A failed device call or kernel launch; what() names the step and the error ("cudaErrorX: text").
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Selects the device and creates the stream the kernels run on. Throws DeviceError (e.g. no device).
void device_init();
/// One line about the device (name, multiprocessors, memory, driver and runtime versions).
std::string device_describe();
/// Whether this build runs on a card (false: the dry run on the CPU).
bool device_is_gpu();

void* device_alloc(std::size_t bytes);  // throws DeviceError
void device_free(void* p) noexcept;
void device_upload(void* dst, const void* src, std::size_t bytes);
void device_download(void* dst, const void* src, std::size_t bytes);
void device_copy(void* dst, const void* src, std::size_t bytes);  // device to device, on the stream
void device_fill(void* dst, unsigned char byte, std::size_t bytes);  // every byte set, on the stream
/// The stream handed to the kernels (a cudaStream_t).
void* device_stream();
/// Waits for the stream; a fault inside a kernel surfaces here. Throws DeviceError naming `what`.
void device_sync(const std::string& what);
/// "cudaErrorX: its description" for a kernel entry point's return code.
std::string device_error_text(int code);
/// The code a kernel entry point returns for arguments it refuses (cudaErrorInvalidValue).
int device_invalid_value_code();

/// Throws DeviceError("<what>: the launch returned <error text>") unless rc is 0 (no wait: for timed runs).
void check_return(int rc, const std::string& what);
/// check_return, then waits for the stream, so that a fault inside the kernel is reported with `what` too.
void check_launch(int rc, const std::string& what);

/// Median milliseconds of `reps` timed runs of `run` after `warmup` untimed ones. Before each run, outside
/// the timed span: `prepare` (e.g. restoring an input the kernel overwrites; may be empty), then a write of
/// a buffer larger than the L2 cache, so that each run reads its operands from memory, as in a training step.
double device_time_ms(const std::function<void()>& run, const std::function<void()>& prepare, int warmup, int reps);

/// The median of timing samples (the mean of the middle two for an even count); 0 for none.
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// A device array of n elements of T, freed on destruction.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n), p_(n > 0 ? static_cast<T*>(device_alloc(n * sizeof(T))) : nullptr) {}
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : n_(std::exchange(o.n_, 0)), p_(std::exchange(o.p_, nullptr)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
    return *this;
  }
  ~DeviceArray() { device_free(p_); }
  static DeviceArray from(const std::vector<T>& v) {
    DeviceArray a(v.size());
    if (!v.empty()) a.upload(v.data());
    return a;
  }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  void upload(const T* src) { device_upload(p_, src, bytes()); }
  void download(T* dst) const { device_download(dst, p_, bytes()); }
  std::vector<T> to_host() const {
    std::vector<T> v(n_);
    if (n_ > 0) download(v.data());
    return v;
  }
  void fill(unsigned char byte) {
    if (n_ > 0) device_fill(p_, byte, bytes());
  }

 private:
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace gaugelab::kcheck
