// The step profiler (step_profiler.hpp): kineto's C++ entry points, the ones torch.profiler calls.
#include "gpt2/train/step_profiler.hpp"

#include <filesystem>
#include <iostream>
#include <set>
#include <utility>

#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/profiler_kineto.h>

namespace gaugelab::gpt2 {

namespace {
namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;

std::set<ActivityType> activities(const c10::Device& d) {
  std::set<ActivityType> a{ActivityType::CPU};
  if (d.is_cuda()) a.insert(ActivityType::CUDA);
  return a;
}

// Waits for the device's queued work (the step's kernels must finish inside the trace): item() reads
// back through the same stream.
void drain(const c10::Device& d) {
  if (d.is_cuda()) (void)at::zeros({1}, at::TensorOptions().device(d)).sum().item<float>();
}
}  // namespace

StepProfiler::StepProfiler(std::int64_t from, std::int64_t steps, std::string out_dir, c10::Device device, bool rank0)
    : from_(from), last_(from + steps - 1), path_((std::filesystem::path(out_dir) / "profile.json").string()),
      device_(device), enabled_(rank0 && from > 0 && steps > 0) {}

StepProfiler::~StepProfiler() {
  try {
    finish();
  } catch (const std::exception& e) {  // a destructor reports, never throws
    std::cerr << "train: the profile was not written: " << e.what() << "\n";
  }
}

void StepProfiler::begin(std::int64_t step) {
  if (!enabled_ || active_ || step != from_) return;
  drain(device_);  // the steps before the window stay out of it
  const prof::ProfilerConfig cfg(torch::profiler::impl::ProfilerState::KINETO);
  prof::prepareProfiler(cfg, activities(device_));
  prof::enableProfiler(cfg, activities(device_));
  active_ = true;
}

void StepProfiler::end(std::int64_t step) {
  if (active_ && step >= last_) finish();
}

void StepProfiler::finish() {
  if (!active_) return;
  active_ = false;
  enabled_ = false;
  drain(device_);
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  result->save(path_);
  std::cout << "profile: steps " << from_ << ".." << last_ << " traced to " << path_
            << " (scripts/trace_top.py ranks its kernels)" << std::endl;
}

}  // namespace gaugelab::gpt2
