#include "toys/sweep_sink.hpp"

#include <chrono>
#include <cstdio>
#include <limits>

#include "toys/sweep_log.hpp"

namespace gaugelab::toys {

namespace {

// The log's own timed flushing is switched off (the sink flushes between whole runs instead):
// an interval no run outlives, and no buffer limit a run's rows could reach.
io::RunLog::Options sink_log_options() {
  io::RunLog::Options o;
  o.flush_interval_s = 1.0e9;
  o.max_buffered_rows = std::numeric_limits<std::size_t>::max();
  return o;
}

}  // namespace

SweepSink::SweepSink(std::string path, io::Provenance prov, std::vector<std::string> grid, bool resume, bool replace,
                     double flush_s)
    : path_(std::move(path)), prov_(std::move(prov)), grid_(std::move(grid)), replace_(replace), flush_s_(flush_s) {
  if (resume) {
    log_.emplace(io::RunLog::open_append(path_, sink_log_options()));
    log_->start();
  }
  flusher_ = std::thread([this] { flusher_loop(); });
}

SweepSink::~SweepSink() {
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

void SweepSink::open_fresh(const ToyRun* example) {
  log_.emplace(io::RunLog::create(path_, prov_, replace_, sink_log_options()));
  if (example) declare_sweep_tables(*log_, grid_, *example);
  log_->start();
}

void SweepSink::add(std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run) {
  std::lock_guard lk(mu_);
  if (flush_error_) std::rethrow_exception(flush_error_);
  if (closed_) throw std::logic_error("SweepSink::add after close()");
  if (!log_) open_fresh(&run);
  append_sweep_run(*log_, row, grid_values, run, grid_);
  dirty_ = true;
}

void SweepSink::flusher_loop() {
  const auto period = std::chrono::duration<double>(flush_s_);
  std::unique_lock lk(mu_);
  while (!stop_) {
    wake_.wait_for(lk, period);
    if (stop_ || !dirty_ || !log_) continue;
    try {
      log_->flush();
      dirty_ = false;
    } catch (...) {
      flush_error_ = std::current_exception();
      return;
    }
  }
}

void SweepSink::close() {
  {
    std::lock_guard lk(mu_);
    if (closed_) return;
    closed_ = true;
    stop_ = true;
  }
  wake_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  if (flush_error_) std::rethrow_exception(flush_error_);
  if (!log_) open_fresh(nullptr);
  log_->close();
}

}  // namespace gaugelab::toys
