// --profile-from S --profile-steps N: training steps S .. S+N-1 traced by PyTorch's profiler (kineto):
// the CPU operators, and on CUDA every kernel, copy and set with its device time. The trace is written to
// OUT/profile.json (Chrome trace format: Perfetto or chrome://tracing open it); scripts/trace_top.py ranks
// its kernels by total device time and says how busy the device was. It is how the GPU step's profile is
// read beside the peers' (scripts/gpu-bench.sh). Off (S = 0, the default) it touches nothing.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

namespace gaugelab::gpt2 {

class StepProfiler {
 public:
  /// from = 0: off. The trace is written by rank 0 only (rank0 false: the profiler is never started).
  StepProfiler(std::int64_t from, std::int64_t steps, std::string out_dir, c10::Device device, bool rank0);
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;
  ~StepProfiler();  // a run that stops inside the window still writes what it traced

  void begin(std::int64_t step);  // before the step's first micro-batch (1-based step, as in the log)
  void end(std::int64_t step);    // after its update: the window's last step writes the trace

 private:
  void finish();
  std::int64_t from_, last_;
  std::string path_;
  c10::Device device_;
  bool enabled_ = false, active_ = false;
};

}  // namespace gaugelab::gpt2
