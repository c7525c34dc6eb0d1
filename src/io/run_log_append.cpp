// RunLog: appending series, heads, table rows and arrays; setting summary values.
#include <algorithm>

#include "io/run_log.hpp"
#include "io/run_log_impl.hpp"

namespace gaugelab::io {

namespace {

std::uint64_t product(const std::vector<hsize_t>& shape) {
  std::uint64_t n = 1;
  for (hsize_t d : shape) n *= d;
  return n;
}

}  // namespace

void RunLog::append_series(std::int64_t step, const std::vector<double>& values) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_open("append_series");
  if (s.series.empty()) s.misuse("append_series with no series declared");
  if (values.size() != s.series.size())
    s.misuse("append_series got " + std::to_string(values.size()) + " values for " +
             std::to_string(s.series.size()) + " series");
  for (std::size_t i = 0; i < values.size(); ++i) s.series[i].push(&values[i], 1);
  s.series_step->push(&step, 1);
  s.after_append(*s.series_step);
}

void RunLog::append_series_named(std::int64_t step, const std::map<std::string, double>& values) {
  std::vector<double> ordered;
  {
    std::lock_guard lk(impl_->mu);
    const Impl& s = *impl_;
    for (const auto& [name, v] : values)
      if (std::find(s.series_names.begin(), s.series_names.end(), name) == s.series_names.end())
        s.misuse("append_series: series '" + name + "' was not declared");
    for (const auto& n : s.series_names) {
      const auto it = values.find(n);
      if (it == values.end()) s.misuse("append_series: no value for series '" + n + "'");
      ordered.push_back(it->second);
    }
  }
  append_series(step, ordered);
}

void RunLog::append_heads(std::int64_t step, const std::vector<core::Mat<double>>& per_name) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_open("append_heads");
  if (s.heads.empty()) s.misuse("append_heads with no heads declared");
  if (per_name.size() != s.heads.size())
    s.misuse("append_heads got " + std::to_string(per_name.size()) + " matrices for " +
             std::to_string(s.heads.size()) + " heads datasets");
  std::vector<double> buf;
  for (std::size_t i = 0; i < per_name.size(); ++i) {
    const auto& m = per_name[i];  // [layers, heads]
    const auto& shape = s.heads[i].row_shape();
    if (static_cast<hsize_t>(m.rows()) != shape[0] || static_cast<hsize_t>(m.cols()) != shape[1])
      s.misuse("append_heads: /heads/" + s.heads_names[i] + " expects [" + std::to_string(shape[0]) + ", " +
               std::to_string(shape[1]) + "], got [" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) +
               "]");
    buf.resize(static_cast<std::size_t>(m.size()));
    for (core::Index l = 0; l < m.rows(); ++l)
      for (core::Index h = 0; h < m.cols(); ++h) buf[static_cast<std::size_t>(l * m.cols() + h)] = m(l, h);
    s.heads[i].push(buf.data(), 1);
  }
  s.heads_step->push(&step, 1);
  s.after_append(*s.heads_step);
}

void RunLog::append_row(const std::string& table, const Row& row) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_open("append_row");
  const auto it = s.tables.find(table);
  if (it == s.tables.end()) s.misuse("append_row: table '" + table + "' was not declared");
  Impl::Table& t = it->second;
  if (row.size() != t.cols.size())
    s.misuse("append_row: table '" + table + "' has " + std::to_string(t.cols.size()) + " columns, row has " +
             std::to_string(row.size()));
  // Check every cell before buffering any, so a bad row never leaves columns of unequal length.
  for (std::size_t i = 0; i < row.size(); ++i) {
    const Column& c = t.cols[i];
    const Cell& v = row[i];
    const bool ok = (c.type == DType::f64 && !std::holds_alternative<std::string>(v)) ||
                    (c.type == DType::i64 && std::holds_alternative<std::int64_t>(v)) ||
                    (c.type == DType::str && std::holds_alternative<std::string>(v));
    if (!ok) s.misuse("append_row: column '" + table + "/" + c.name + "' is " + dtype_name(c.type) + ", got another type");
    if (c.type == DType::str && std::get<std::string>(v).size() > c.width)
      s.misuse("append_row: value '" + std::get<std::string>(v) + "' is longer than column '" + table + "/" + c.name +
               "' (" + std::to_string(c.width) + " bytes)");
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    const Cell& v = row[i];
    if (t.cols[i].type == DType::str) {
      std::string padded = std::get<std::string>(v);
      padded.resize(t.cols[i].width, '\0');
      t.data[i].push(padded.data(), 1);
    } else if (t.cols[i].type == DType::f64) {
      const double d = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                         : static_cast<double>(std::get<std::int64_t>(v));
      t.data[i].push(&d, 1);
    } else {
      t.data[i].push(&std::get<std::int64_t>(v), 1);
    }
  }
  s.after_append(t.data.front());
}

namespace {

void write_fixed(RunLog::Impl& s, const std::string& name, DType type, const void* data, std::size_t count) {
  s.require_open("write_array");
  const auto it = s.fixed_arrays.find(name);
  if (it == s.fixed_arrays.end()) s.misuse("write_array: fixed-shape array '" + name + "' was not declared");
  auto& a = it->second;
  if (a.type != type)
    s.misuse("write_array: /arrays/" + name + " is " + dtype_name(a.type) + ", got " + dtype_name(type) + " data");
  if (count != product(a.shape))
    s.misuse("write_array: /arrays/" + name + " holds " + std::to_string(product(a.shape)) + " values, got " +
             std::to_string(count));
  if (count == 0) return;
  const hid_t mtype = type == DType::f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  h5::check(H5Dwrite(a.dset.get(), mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), s.path, "cannot write /arrays/" + name);
}

void append_rows(RunLog::Impl& s, const std::string& name, DType type, const void* data, std::size_t rows) {
  s.require_open("append_array_rows");
  const auto it = s.rows_arrays.find(name);
  if (it == s.rows_arrays.end()) s.misuse("append_array_rows: extendable array '" + name + "' was not declared");
  if (it->second.type() != type)
    s.misuse("append_array_rows: /arrays/" + name + " is " + dtype_name(it->second.type()) + ", got " +
             dtype_name(type) + " data");
  it->second.push(data, rows);
  s.after_append(it->second);
}

}  // namespace

void RunLog::write_array(const std::string& name, const double* data, std::size_t count) {
  std::lock_guard lk(impl_->mu);
  write_fixed(*impl_, name, DType::f64, data, count);
}

void RunLog::write_array(const std::string& name, const std::int64_t* data, std::size_t count) {
  std::lock_guard lk(impl_->mu);
  write_fixed(*impl_, name, DType::i64, data, count);
}

void RunLog::append_array_rows(const std::string& name, const double* data, std::size_t rows) {
  std::lock_guard lk(impl_->mu);
  append_rows(*impl_, name, DType::f64, data, rows);
}

void RunLog::append_array_rows(const std::string& name, const std::int64_t* data, std::size_t rows) {
  std::lock_guard lk(impl_->mu);
  append_rows(*impl_, name, DType::i64, data, rows);
}

void RunLog::set_summary(const std::string& key, const Cell& value) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_open("set_summary");
  if (key.empty()) s.misuse("set_summary needs a non-empty key");
  s.summary[key] = value;
}

}  // namespace gaugelab::io
