// Private state of RunLog, shared by run_log.cpp (declare/append/flush/close) and
// run_log_open.cpp (create/open_append). Not part of the public interface.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "io/h5_appender.hpp"
#include "io/h5_helpers.hpp"
#include "io/run_log.hpp"
#include "io/writer_lock.hpp"

namespace gaugelab::io {

struct RunLog::Impl {
  struct Table {
    std::vector<Column> cols;
    std::vector<h5::Appender> data;  // one per column, same order
  };
  struct FixedArray {
    h5::Handle dset;
    std::vector<hsize_t> shape;
    DType type = DType::f64;
  };

  std::string path;
  Options opts;
  // Where the log is written while HDF5 is in ordinary mode (run_log_staging.cpp): PATH.creating-PID,
  // renamed over `path` by start() or, after close(), once closed. Empty while the log stands at `path`.
  std::string staging;
  bool staged_copy = false;      // `staging` is a copy of `path` (a resume, or /summary being added)
  bool replaces = false;         // `path` existed when staged: the rename replaces it
  bool publish_refused = false;  // the rename failed: the log stays at `staging`, and is not retried
  WriterLock replaced;           // the lock of the log at `path` being replaced, held until the rename
  WriterLock lock;  // held from create/open_append until close; declared before `file`, released after it
  h5::Handle file;
  bool swmr = false, closed = false;
  mutable std::mutex mu;

  std::vector<std::string> series_names;
  std::vector<h5::Appender> series;  // same order as series_names
  std::optional<h5::Appender> series_step;
  std::vector<std::string> heads_names;
  std::vector<h5::Appender> heads;  // same order as heads_names
  std::optional<h5::Appender> heads_step;
  std::map<std::string, Table> tables;
  std::map<std::string, FixedArray> fixed_arrays;
  std::map<std::string, h5::Appender> rows_arrays;
  std::map<std::string, Cell> summary;  // written at close
  // /commit ([groups] int64, its JSON-list attribute "groups" naming them: "series", "heads",
  // "tables/<name>", "arrays/<name>"): the rows of each appended group known to be on disk. Written
  // only after a flush of every dataset succeeded. A flush that fails part-way (a full disk) can leave a
  // dataset's extent on disk ahead of its data: HDF5's metadata cache may write a dataset's new extent
  // before its chunk cache writes the rows, and such rows read back as fill values. Readers and resumes
  // trust no row past this count (a log without /commit, from an older version: the shortest member).
  h5::Handle commit;
  std::vector<std::string> commit_keys;
  std::chrono::steady_clock::time_point last_flush = std::chrono::steady_clock::now();

  // Background flusher: rows buffered after the last append are still flushed within about
  // flush_interval_s (appends alone would leave them waiting for the next append).
  std::thread flusher;
  std::condition_variable wake;
  bool stop = false;                   // guarded by mu
  // The first failed write (a full disk, a file size limit, an I/O error), from any thread. After it
  // nothing more is written: every later call rethrows it, and close() only releases the file.
  std::exception_ptr write_error;
  mutable bool write_error_delivered = false;  // rethrown to a caller already (also from const checks): close() need not report it again

  ~Impl() {
    stop_flusher();
    discard_unpublished();
  }
  /// Removes the staging file of a log that was never closed (create or open_append failed part-way).
  void discard_unpublished() noexcept;
  void start_flusher();
  void stop_flusher();  // idempotent; call without holding mu

  /// Throws std::runtime_error("run log 'path': what") (no HDF5 detail: a misuse, not an HDF5 failure).
  [[noreturn]] void misuse(const std::string& what) const { throw std::runtime_error("run log '" + path + "': " + what); }
  void require_open(const char* op) const;
  /// A fresh staging name for a new log (stale staging files of dead writers removed first).
  void stage_new();
  /// `path` copied to a fresh staging name, which `lock` then holds; the caller holds `replaced`.
  void stage_copy();
  /// Renames `staging` to `path` (no-op once done); a file that appeared at `path` meanwhile while
  /// creating is refused, not replaced.
  void publish();
  void require_declaring(const char* op) const;
  h5::Handle group(const char* name) const;
  /// Applies `fn` to every extendable dataset, values before their step datasets.
  template <class Fn> void each_appender(Fn&& fn) {
    for (auto& a : series) fn(a);
    if (series_step) fn(*series_step);
    for (auto& a : heads) fn(a);
    if (heads_step) fn(*heads_step);
    for (auto& [name, t] : tables)
      for (auto& a : t.data) fn(a);
    for (auto& [name, a] : rows_arrays) fn(a);
  }
  /// Writes and flushes every buffered row; a failure is recorded in write_error and rethrown.
  /// `to_caller`: the exception reaches the user's call (an append, flush, start), not the
  /// background flusher or close(), which report it themselves.
  void write_and_flush(bool to_caller = true);
  /// The groups /commit counts and their written rows now (each group's shortest member), same order.
  std::vector<std::string> commit_groups() const;
  std::vector<std::int64_t> written_rows() const;
  /// Creates /commit for the declared groups (or re-creates it when they changed); before SWMR writing.
  void declare_commit();
  /// Records written_rows() in /commit and flushes it; after every successful flush.
  void write_commit();
  void after_append(const h5::Appender& a);
  void write_summary(hid_t summary_group);
  /// Records the declared order of a group's members in its JSON-list attribute `attr`.
  void write_order(const char* group_name, const char* attr, const std::vector<std::string>& names);
};

}  // namespace gaugelab::io
