// Reading a run log back (schema: run_log.hpp): provenance, series, heads, tables, arrays, summary.
//
// Opens read-only, as a SWMR reader when the file allows it, so a log still being written (or
// left by a killed writer) can be read; every read re-opens and refreshes its datasets, so the
// same reader sees rows flushed after it was opened. Groups of datasets that share an index
// (the series, the heads, a table's columns) are trimmed to their shortest member.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/run_log_types.hpp"

namespace gaugelab::io {

/// The root attributes of a log.
struct RootAttrs {
  std::string gaugelab_version, git_sha, kind, command, config_json, created_utc, host;
  std::int64_t threads = 0;
  std::uint64_t seed = 0;
  nlohmann::json config() const { return nlohmann::json::parse(config_json); }
};

/// Every series, trimmed to a common length.
struct SeriesData {
  std::vector<std::int64_t> step;            // [n]
  std::vector<std::string> names;            // declared order
  std::vector<std::vector<double>> values;   // values[i] is series names[i], [n] each
  /// The series called `name` (throws std::out_of_range naming it if absent).
  const std::vector<double>& at(const std::string& name) const;
};

/// One /heads dataset: values [records, layers, heads], row-major.
struct HeadsData {
  std::uint64_t records = 0, layers = 0, heads = 0;
  std::vector<double> values;
  double at(std::uint64_t r, std::uint64_t l, std::uint64_t h) const { return values[(r * layers + l) * heads + h]; }
};

using ColumnData = std::variant<std::vector<double>, std::vector<std::int64_t>, std::vector<std::string>>;

/// A table's columns, trimmed to a common number of rows.
struct TableData {
  std::vector<Column> columns;     // declared order
  std::vector<ColumnData> data;    // data[i] holds columns[i]
  std::uint64_t rows = 0;
  /// Column `name` as the given type (throws std::runtime_error if absent or of another type).
  const std::vector<double>& f64(const std::string& name) const;
  const std::vector<std::int64_t>& i64(const std::string& name) const;
  const std::vector<std::string>& str(const std::string& name) const;

 private:
  const ColumnData& column(const std::string& name) const;
};

/// An /arrays dataset, values converted to the requested element type, row-major.
template <class T>
struct ArrayData {
  std::vector<std::uint64_t> shape;
  std::vector<T> values;
};

class RunLogReader {
 public:
  /// Opens `path` read-only. Throws a one-line std::runtime_error naming the path if it is
  /// missing, not HDF5, or not a gaugelab run log.
  explicit RunLogReader(const std::string& path);
  RunLogReader(RunLogReader&&) noexcept;
  RunLogReader& operator=(RunLogReader&&) noexcept;
  ~RunLogReader();

  const std::string& path() const;
  RootAttrs root() const;

  std::vector<std::string> series_names() const;
  SeriesData series() const;
  std::uint64_t series_length() const;  // common length of /series (0 if none)

  std::vector<std::string> heads_names() const;
  std::vector<std::int64_t> heads_step() const;
  HeadsData heads(const std::string& name) const;  // trimmed to the length of /heads/step

  std::vector<std::string> table_names() const;
  bool has_table(const std::string& name) const;
  std::vector<Column> table_columns(const std::string& name) const;
  TableData table(const std::string& name) const;

  std::vector<std::string> array_names() const;
  ArrayData<double> array(const std::string& name) const;
  ArrayData<std::int64_t> array_i64(const std::string& name) const;

  std::map<std::string, Cell> summary() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gaugelab::io
