// Where the sweep's worker threads put finished runs: one log, appended under one mutex, flushed
// only between whole runs (every flush_s seconds, from a background thread), so a kill leaves
// every run either complete in the file or absent from /tables/runs (toys/sweep_log.hpp).
//
// A fresh log is created on the first finished run (its metrics declare the columns; HDF5 SWMR
// needs every dataset declared before writing starts); a resumed log is reopened at construction.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "io/provenance.hpp"
#include "io/run_log.hpp"
#include "toys/toy_run.hpp"

namespace gaugelab::toys {

class SweepSink {
 public:
  /// Fresh: creates `path` (replacing it if `replace`) on the first add(). Resume: reopens it now.
  SweepSink(std::string path, io::Provenance prov, std::vector<std::string> grid, bool resume, bool replace,
            double flush_s);
  SweepSink(const SweepSink&) = delete;
  SweepSink& operator=(const SweepSink&) = delete;
  ~SweepSink();

  /// Appends one finished run. Thread-safe.
  void add(std::int64_t row, const std::vector<double>& grid_values, const ToyRun& run);
  /// Final flush and close; a fresh sink that never got a run still leaves a (table-less) log.
  void close();

 private:
  void open_fresh(const ToyRun* example);  // with mu_ held
  void flusher_loop();

  std::string path_;
  io::Provenance prov_;
  std::vector<std::string> grid_;
  bool replace_;
  double flush_s_;
  std::optional<io::RunLog> log_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool dirty_ = false, stop_ = false, closed_ = false;
  std::exception_ptr flush_error_;
  std::thread flusher_;
};

}  // namespace gaugelab::toys
