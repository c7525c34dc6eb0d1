// The kernel check's device layer for the dry run on the CPU (check_device.hpp): "device" arrays in host
// memory, copies by memcpy, a steady clock for timing. With host_entry_points.cpp in place of the CUDA kernels it
// runs every case of the check without a card, so that the harness itself (inputs, references, comparisons,
// tolerances, reruns, report) is tested before a card's minutes are spent on it.
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "tests/cuda/check_device.hpp"

namespace gaugelab::kcheck {

void device_init() {}

std::string device_describe() { return "the CPU (dry run: host transcriptions of the kernels, no card)"; }

bool device_is_gpu() { return false; }

void* device_alloc(std::size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) throw DeviceError("malloc(" + std::to_string(bytes) + " bytes): out of memory");
  return p;
}

void device_free(void* p) noexcept { std::free(p); }

void device_upload(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

void device_download(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

void device_copy(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

void device_fill(void* dst, unsigned char byte, std::size_t bytes) { std::memset(dst, byte, bytes); }

void* device_stream() { return nullptr; }

void device_sync(const std::string&) {}

std::string device_error_text(int code) {
  return code == device_invalid_value_code() ? "invalid value (host transcription)"
                                             : "error " + std::to_string(code) + " (host transcription)";
}

int device_invalid_value_code() { return 1; }  // cudaErrorInvalidValue's value

void check_return(int rc, const std::string& what) {
  if (rc != 0) throw DeviceError(what + ": the launch returned " + device_error_text(rc));
}

void check_launch(int rc, const std::string& what) { check_return(rc, what); }

double device_time_ms(const std::function<void()>& run, const std::function<void()>& prepare, int warmup, int reps) {
  for (int k = 0; k < warmup; ++k) {
    if (prepare) prepare();
    run();
  }
  std::vector<double> ms;
  for (int k = 0; k < reps; ++k) {
    if (prepare) prepare();
    const auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median_of(std::move(ms));
}

}  // namespace gaugelab::kcheck
