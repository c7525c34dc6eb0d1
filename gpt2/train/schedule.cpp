#include "gpt2/train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gaugelab::gpt2 {

double LrSchedule::at(std::int64_t it) const {
  if (it < warmup) return lr * static_cast<double>(it + 1) / static_cast<double>(warmup + 1);
  if (it > decay_iters) return min_lr;
  if (decay_iters == warmup) return min_lr;
  const double ratio = static_cast<double>(it - warmup) / static_cast<double>(decay_iters - warmup);
  const double coeff = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));
  return min_lr + coeff * (lr - min_lr);
}

SpikeDetector::SpikeDetector(double factor, std::int64_t window, std::int64_t warmup)
    : factor_(factor), size_(static_cast<std::size_t>(std::max<std::int64_t>(window, 1))), warmup_(warmup) {}

double SpikeDetector::median() const {
  if (window_.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(window_.begin(), window_.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double hi = v[mid];
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}

bool SpikeDetector::observe(std::int64_t step, double grad_norm) {
  bool spike = false;
  if (step > warmup_ && window_.size() == size_) spike = grad_norm > factor_ * median();
  if (std::isfinite(grad_norm)) {
    window_.push_back(grad_norm);
    if (window_.size() > size_) window_.pop_front();
  }
  return spike;
}

void SpikeDetector::restore(const std::vector<double>& window) {
  window_.assign(window.begin(), window.end());
  while (window_.size() > size_) window_.pop_front();
}

}  // namespace gaugelab::gpt2
