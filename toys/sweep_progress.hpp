// The sweep's progress line on stderr: rows done / total, rate, ETA. Rate-limited; redrawn in
// place (carriage return) on a terminal, plain lines when stderr is a file or pipe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace gaugelab::toys {

class SweepProgress {
 public:
  /// `total` rows of this shard, `already` of them done before this process started;
  /// `interval_s` between lines (0: 0.5 s on a terminal, 10 s otherwise). `out` may be null (silent).
  SweepProgress(std::string label, std::int64_t total, std::int64_t already, double interval_s, std::FILE* out);
  /// One more row finished. Thread-safe.
  void tick();
  /// The last line (always printed, newline-terminated).
  void finish();
  std::int64_t done_here() const { return done_here_; }
  double elapsed_s() const;

  /// "37/120 rows (31%), 4.2 rows/s, ETA 20 s" — exposed for tests.
  static std::string line(std::int64_t done, std::int64_t total, double rate, bool final);

 private:
  void print(bool final);  // with mu_ held

  std::string label_;
  std::int64_t total_, already_, done_here_ = 0;
  double interval_s_;
  std::FILE* out_;
  bool tty_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gaugelab::toys
