// An extendable HDF5 dataset [rows, row_shape...] with an in-memory buffer of rows not yet written.
//
// push() only buffers; write() extends the dataset and writes the buffered rows in one call;
// flush() makes them durable (H5Dflush), which is what SWMR readers and SIGKILL survivors see.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/h5_helpers.hpp"
#include "io/run_log_types.hpp"

namespace gaugelab::io::h5 {

class Appender {
 public:
  /// Creates `loc/name` with shape [0, row_shape...], unlimited along dim 0, chunked by
  /// `chunk_rows` rows (reduced so one chunk stays near 1 MiB). `width`: bytes per str value.
  static Appender create(hid_t loc, const std::string& name, DType type, std::size_t width,
                         const std::vector<hsize_t>& row_shape, hsize_t chunk_rows, const std::string& path,
                         const std::string& where);
  /// Opens an existing extendable dataset; its type and row shape are read from the file.
  static Appender open(hid_t loc, const std::string& name, const std::string& path, const std::string& where);

  /// Buffers `rows` rows of raw values in memory layout (double, int64 or `width`-byte strings).
  void push(const void* data, std::size_t rows);
  /// Extends the dataset and writes every buffered row.
  void write();
  /// H5Dflush: the written rows become visible to SWMR readers and survive a kill.
  void flush();
  void close() { dset_.reset(); }
  /// Shrinks the written rows to `rows` (only with nothing buffered); used to even out a killed log.
  void truncate(hsize_t rows);

  hsize_t rows() const { return file_rows_ + pending_rows_; }  // written + buffered
  hsize_t written_rows() const { return file_rows_; }
  hsize_t pending_rows() const { return pending_rows_; }
  DType type() const { return type_; }
  std::size_t width() const { return width_; }
  const std::vector<hsize_t>& row_shape() const { return row_shape_; }
  std::size_t row_elems() const { return row_elems_; }
  const std::string& where() const { return where_; }

 private:
  void init_mem_type();

  Handle dset_, mem_type_;
  DType type_ = DType::f64;
  std::size_t width_ = 0;         // str: bytes per value
  std::vector<hsize_t> row_shape_;
  std::size_t row_elems_ = 1;     // values per row
  std::size_t row_bytes_ = 0;
  std::vector<unsigned char> pending_;
  hsize_t pending_rows_ = 0, file_rows_ = 0;
  std::string path_, where_;
};

}  // namespace gaugelab::io::h5
