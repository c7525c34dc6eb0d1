// The HDF5 run log every result-producing verb writes (DESIGN §2, a fixed contract).
//
// Schema (HDF5 1.10, libver bounds "latest", SWMR-readable while the run is going):
//   /  root attributes (strings are fixed-length null-padded UTF-8 of their own length, kept out of the
//        global heap, which libhdf5 1.10 reads unsafely when damaged; h5py reads them as bytes, the
//        analysis reader decodes; older logs hold variable-length strings, read as well):
//        gaugelab_version, git_sha, kind ("toy/relu", "sweep/relu", "diag/heads", "gpt2/train", ...),
//        command (argv, shell-quoted and space-joined), config_json (the fully resolved config as
//        JSON text), created_utc ("YYYY-MM-DDTHH:MM:SSZ"), host, threads (int64), seed (uint64)
//   /series/<name>   float64 [n], extendable; all series share /series/step (int64 [n])
//   /heads/<name>    float64 [n, layers, heads], extendable; all share /heads/step (int64 [n])
//   /tables/<table>/<column>  1-D extendable, one dataset per column, all of one length; a column is
//                    float64, int64, or a fixed-length null-padded UTF-8 string (`Column::width` bytes)
//   /arrays/<name>   float64 or int64: fixed shape written once (write_array), or [rows, ...]
//                    extendable along dim 0 (append_array_rows)
//   /summary         attributes (float64, int64 or UTF-8 string): the run's headline figures
//   /commit          int64 [groups], attribute "groups" (JSON list: "series", "heads", "tables/<t>",
//                    "arrays/<name>"): each group's rows confirmed on disk, rewritten after every flush
//                    that succeeded in full (a flush that fails part-way can leave extents ahead of data)
// The five groups always exist. Lengths are equal in a closed log; a live or killed log may show
// one dataset a flush ahead of another, so readers trim to the shortest and to /commit (RunLogReader
// does; open_append cuts the same rows).
//
// Life cycle: create (or open_append) -> declare_* -> start() -> append_* ... -> close().
// HDF5 1.10 SWMR cannot create datasets or attributes once SWMR writing has begun, hence every
// dataset is declared before start(). Appends are buffered in memory; a flush (write + H5Dflush
// of every dataset) happens on flush()/close(), on an append once Options::flush_interval_s has
// passed since the last flush, and from a background thread so rows never wait longer than about
// that interval. A run killed with SIGKILL leaves everything up to its last flush readable (h5py,
// swmr=True). /summary values are held in memory and written by close() without SWMR, into a copy
// renamed over the log once closed (a killed run has no summary; live readers see it on reopening).
// Everything written without SWMR (a new log before start(), a resumed one before start(), the
// summary) is written at PATH.creating-PID and renamed over PATH (run_log_staging.cpp): a kill at any
// moment leaves PATH absent, as it was, or a SWMR log flushed up to its last flush.
// A writer holds a lock (writer_lock.hpp) that keeps a second writer off its file. Every public
// method takes an internal mutex, so several threads may append to one log.
// Order attributes (JSON lists of names, declared order): /series and /heads carry "names", each
// /tables/<table> group carries "columns"; readers fall back to sorted member names without them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "io/provenance.hpp"
#include "io/run_log_types.hpp"

namespace gaugelab::io {

/// Settings of a RunLog (a nested struct with defaults cannot be a default argument in C++).
struct RunLogOptions {
  double flush_interval_s = 2.0;          // longest a buffered row waits to be flushed; 0 = flush on every append
  std::size_t max_buffered_rows = 65536;  // a dataset buffering this many rows is written out regardless
  std::uint64_t series_chunk = 1024;      // rows per HDF5 chunk of /series datasets
  std::uint64_t heads_chunk = 64;         // records per chunk of /heads datasets
  std::uint64_t table_chunk = 256;        // rows per chunk of /tables columns
  std::uint64_t array_chunk = 256;        // rows per chunk of extendable /arrays
};

class RunLog {
 public:
  using Options = RunLogOptions;

  /// Creates a new log for `path` (parent directories too) and writes the root attributes; it stands
  /// at `path` from start() on. Refuses to replace an existing file unless `force`, and always while
  /// another RunLog writes it; a forced one replaces the old log at start().
  static RunLog create(const std::string& path, const Provenance& prov, bool force, Options opts = {});
  /// Reopens an existing log to append more (resume): every dataset already there is declared;
  /// declaring it again with the same shape is a no-op, so a resumed run repeats its declarations.
  /// A log whose writer was killed is repaired first (consistency flags cleared, EOA extended) — on a
  /// copy, which replaces `path` at start(); a log another process is still writing is refused (see
  /// writer_lock.hpp).
  static RunLog open_append(const std::string& path, Options opts = {});

  RunLog(RunLog&&) noexcept;
  RunLog& operator=(RunLog&&) noexcept;
  ~RunLog();  // close(); an error there is printed to stderr (destructors do not throw)

  // --- declarations: before start() only ---
  /// /series/<name> for each name ("step" is reserved). New names only while /series has no rows.
  void declare_series(const std::vector<std::string>& names);
  /// /heads/<name> [record, layers, heads] for each name ("step" is reserved).
  void declare_heads(const std::vector<std::string>& names, int layers, int heads);
  /// /tables/<table>/<column> for each column (at least one).
  void declare_table(const std::string& table, const std::vector<Column>& cols);
  /// /arrays/<name> of fixed `shape`, written once with write_array (f64 or i64).
  void declare_array(const std::string& name, const std::vector<std::uint64_t>& shape, DType type = DType::f64);
  /// /arrays/<name> of shape [rows, row_shape...], extendable along dim 0 (append_array_rows).
  void declare_rows_array(const std::string& name, const std::vector<std::uint64_t>& row_shape,
                          DType type = DType::f64);
  /// Writes what is buffered and switches to SWMR writing: readers may now open the file live.
  void start();

  // --- data ---
  /// One row of every series, values in declared order (series_names()).
  void append_series(std::int64_t step, const std::vector<double>& values);
  /// One row of every series by name; every declared series must be present, no other.
  void append_series_named(std::int64_t step, const std::map<std::string, double>& values);
  /// One record of every heads dataset, in declared order; each matrix is [layers, heads].
  void append_heads(std::int64_t step, const std::vector<core::Mat<double>>& per_name);
  /// One row of `table`, cells in column order; an int64 cell may fill an f64 column.
  void append_row(const std::string& table, const Row& row);
  /// Writes a fixed-shape array (row-major, `count` = product of its shape).
  void write_array(const std::string& name, const double* data, std::size_t count);
  void write_array(const std::string& name, const std::int64_t* data, std::size_t count);
  /// Appends `rows` rows (row-major, rows * product(row_shape) values) to an extendable array.
  void append_array_rows(const std::string& name, const double* data, std::size_t rows);
  void append_array_rows(const std::string& name, const std::int64_t* data, std::size_t rows);
  /// A /summary attribute, written at close(); setting a key again replaces its value.
  void set_summary(const std::string& key, const Cell& value);

  /// Writes every buffered row and H5Dflush'es every dataset.
  void flush();
  /// Final flush, closes, writes /summary. Idempotent; any later call other than close() throws.
  void close();

  // --- introspection (a resumed sweep asks what is already there) ---
  const std::string& path() const;
  bool started() const;
  std::vector<std::string> series_names() const;
  std::vector<std::string> heads_names() const;
  std::vector<std::string> table_names() const;
  std::vector<Column> table_columns(const std::string& table) const;
  std::uint64_t series_rows() const;                     // written + buffered
  std::uint64_t table_rows(const std::string& table) const;  // written + buffered

  struct Impl;

 private:
  explicit RunLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gaugelab::io
