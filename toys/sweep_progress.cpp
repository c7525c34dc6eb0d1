#include "toys/sweep_progress.hpp"

#include <unistd.h>

#include <cmath>

namespace gaugelab::toys {

namespace {

std::string duration_text(double s) {
  char buf[32];
  const auto t = static_cast<long long>(std::llround(s));
  if (t < 60) std::snprintf(buf, sizeof buf, "%lld s", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

}  // namespace

SweepProgress::SweepProgress(std::string label, std::int64_t total, std::int64_t already, double interval_s,
                             std::FILE* out)
    : label_(std::move(label)), total_(total), already_(already), out_(out) {
  tty_ = out_ && isatty(fileno(out_));
  // Defaults: a terminal line can redraw often; a log file should get a line now and then.
  interval_s_ = interval_s > 0 ? interval_s : (tty_ ? 0.5 : 10.0);
  start_ = last_ = std::chrono::steady_clock::now();
}

double SweepProgress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string SweepProgress::line(std::int64_t done, std::int64_t total, double rate, bool final) {
  char buf[160];
  const double pct = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  std::string eta = final ? "done" : rate > 0 ? "ETA " + duration_text(static_cast<double>(total - done) / rate) : "ETA ?";
  std::snprintf(buf, sizeof buf, "%lld/%lld rows (%.0f%%), %.3g rows/s, %s", static_cast<long long>(done),
                static_cast<long long>(total), pct, rate, eta.c_str());
  return buf;
}

void SweepProgress::print(bool final) {
  if (!out_) return;
  const double t = elapsed_s();
  const double rate = t > 0 ? static_cast<double>(done_here_) / t : 0.0;
  const std::string l = label_ + ": " + line(already_ + done_here_, total_, rate, final);
  if (tty_) std::fprintf(out_, "\r%s\033[K%s", l.c_str(), final ? "\n" : "");
  else std::fprintf(out_, "%s\n", l.c_str());
  std::fflush(out_);
}

void SweepProgress::tick() {
  std::lock_guard lk(mu_);
  ++done_here_;
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < interval_s_) return;
  last_ = now;
  print(false);
}

void SweepProgress::finish() {
  std::lock_guard lk(mu_);
  print(true);
}

}  // namespace gaugelab::toys
