#include "io/h5_appender.hpp"

#include <algorithm>

namespace gaugelab::io::h5 {

namespace {

// A chunk near this size keeps writes and SWMR reads efficient without bloating small logs.
constexpr std::size_t kTargetChunkBytes = std::size_t{1} << 20;

}  // namespace

void Appender::init_mem_type() {
  const std::string what = "cannot make the memory type of " + where_;
  switch (type_) {
    case DType::f64: mem_type_ = own(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose, path_, what); break;
    case DType::i64: mem_type_ = own(H5Tcopy(H5T_NATIVE_INT64), H5Tclose, path_, what); break;
    case DType::str: mem_type_ = fixed_string_type(width_, path_); break;
  }
  row_elems_ = 1;
  for (hsize_t d : row_shape_) row_elems_ *= static_cast<std::size_t>(d);
  row_bytes_ = row_elems_ * (type_ == DType::str ? width_ : 8);
}

Appender Appender::create(hid_t loc, const std::string& name, DType type, std::size_t width,
                          const std::vector<hsize_t>& row_shape, hsize_t chunk_rows, const std::string& path,
                          const std::string& where) {
  const std::string what = "cannot create " + where;
  if (type == DType::str && width == 0) fail(path, what + ": string width must be > 0");
  Appender a;
  a.type_ = type;
  a.width_ = type == DType::str ? width : 8;
  a.row_shape_ = row_shape;
  a.path_ = path;
  a.where_ = where;
  a.init_mem_type();

  std::vector<hsize_t> dims{0}, maxdims{H5S_UNLIMITED}, chunk{1};
  const std::size_t by_size = std::max<std::size_t>(1, kTargetChunkBytes / std::max<std::size_t>(1, a.row_bytes_));
  chunk[0] = std::max<hsize_t>(1, std::min<hsize_t>(chunk_rows, by_size));
  for (hsize_t d : row_shape) {
    if (d == 0) fail(path, what + ": every row dimension must be > 0");
    dims.push_back(d);
    maxdims.push_back(d);
    chunk.push_back(d);
  }
  Handle space = own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data()), H5Sclose, path,
                     what);
  Handle dcpl = own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, path, what);
  check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), path, what);
  Handle ftype;
  switch (type) {
    case DType::f64: ftype = own(H5Tcopy(H5T_IEEE_F64LE), H5Tclose, path, what); break;
    case DType::i64: ftype = own(H5Tcopy(H5T_STD_I64LE), H5Tclose, path, what); break;
    case DType::str: ftype = fixed_string_type(width, path); break;
  }
  a.dset_ = own(H5Dcreate2(loc, name.c_str(), ftype.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                H5Dclose, path, what);
  return a;
}

Appender Appender::open(hid_t loc, const std::string& name, const std::string& path, const std::string& where) {
  Appender a;
  a.path_ = path;
  a.where_ = where;
  if (!link_exists(loc, name)) fail(path, "missing dataset " + where);
  a.dset_ = own(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, path, "cannot open " + where);
  Handle ftype = own(H5Dget_type(a.dset_.get()), H5Tclose, path, "cannot read the type of " + where);
  switch (H5Tget_class(ftype.get())) {
    case H5T_FLOAT: a.type_ = DType::f64; a.width_ = 8; break;
    case H5T_INTEGER: a.type_ = DType::i64; a.width_ = 8; break;
    case H5T_STRING:
      if (H5Tis_variable_str(ftype.get()) > 0)
        fail(path, where + " holds variable-length strings (not appendable under SWMR)");
      a.type_ = DType::str;
      a.width_ = H5Tget_size(ftype.get());
      break;
    default: fail(path, where + " is not a float, integer or string dataset");
  }
  Handle space = own(H5Dget_space(a.dset_.get()), H5Sclose, path, "cannot read the shape of " + where);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 1) fail(path, where + " is a scalar, not an extendable dataset");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), maxdims(dims.size());
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), maxdims.data()), path, "cannot read " + where);
  if (maxdims[0] != H5S_UNLIMITED) fail(path, where + " is not extendable along its first dimension");
  a.file_rows_ = dims[0];
  a.row_shape_.assign(dims.begin() + 1, dims.end());
  a.init_mem_type();
  return a;
}

void Appender::push(const void* data, std::size_t rows) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  pending_.insert(pending_.end(), bytes, bytes + rows * row_bytes_);
  pending_rows_ += rows;
}

void Appender::write() {
  if (pending_rows_ == 0) return;
  const std::string what = "cannot append to " + where_;
  std::vector<hsize_t> dims{file_rows_ + pending_rows_}, start{file_rows_}, count{pending_rows_};
  for (hsize_t d : row_shape_) {
    dims.push_back(d);
    start.push_back(0);
    count.push_back(d);
  }
  check(H5Dset_extent(dset_.get(), dims.data()), path_, what);
  Handle fspace = own(H5Dget_space(dset_.get()), H5Sclose, path_, what);
  check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), path_,
        what);
  Handle mspace = own(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose, path_, what);
  check(H5Dwrite(dset_.get(), mem_type_.get(), mspace.get(), fspace.get(), H5P_DEFAULT, pending_.data()), path_,
        what);
  file_rows_ += pending_rows_;
  pending_rows_ = 0;
  pending_.clear();
}

void Appender::truncate(hsize_t rows) {
  if (pending_rows_ > 0 || rows > file_rows_) fail(path_, "cannot truncate " + where_);
  std::vector<hsize_t> dims{rows};
  dims.insert(dims.end(), row_shape_.begin(), row_shape_.end());
  check(H5Dset_extent(dset_.get(), dims.data()), path_, "cannot truncate " + where_);
  file_rows_ = rows;
}

void Appender::flush() {
  if (dset_.valid()) check(H5Dflush(dset_.get()), path_, "cannot flush " + where_);
}

}  // namespace gaugelab::io::h5
