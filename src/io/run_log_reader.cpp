#include "io/run_log_reader.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "io/h5_helpers.hpp"

namespace gaugelab::io {

struct RunLogReader::Impl {
  std::string path;
  h5::Handle file;
  bool swmr = false;

  [[noreturn]] void bad(const std::string& what) const { throw std::runtime_error("run log '" + path + "': " + what); }

  h5::Handle group(const std::string& where) const {
    h5::silence_errors();  // this thread's own error stack (a reader may be used from any thread)
    if (!h5::link_exists(file.get(), where)) bad("missing group " + where);
    return h5::own(H5Gopen2(file.get(), where.c_str(), H5P_DEFAULT), H5Gclose, path, "cannot open group " + where);
  }
  // Opens a dataset and, for a SWMR reader, refreshes it so rows flushed since are seen.
  h5::Handle dataset(const std::string& where) const {
    h5::silence_errors();
    if (!h5::link_exists(file.get(), where)) bad("missing dataset " + where);
    h5::Handle d = h5::own(H5Dopen2(file.get(), where.c_str(), H5P_DEFAULT), H5Dclose, path, "cannot open " + where);
    if (swmr) h5::check(H5Drefresh(d.get()), path, "cannot refresh " + where);
    return d;
  }
  H5T_class_t type_class(hid_t d, const std::string& where) const {
    h5::Handle t = h5::own(H5Dget_type(d), H5Tclose, path, "cannot read the type of " + where);
    return H5Tget_class(t.get());
  }
  hsize_t length(const std::string& where) const {
    h5::Handle d = dataset(where);
    const auto dims = h5::extent(d.get(), path);
    if (dims.empty()) bad(where + " is a scalar, expected an array");
    return dims[0];
  }

  // The rows of a group ("series", "heads", "tables/<name>", "arrays/<name>") that /commit says were
  // written (RunLog::Impl::commit); no bound for a log without /commit or a group it does not count.
  hsize_t committed(const std::string& key) const {
    constexpr hsize_t kAll = std::numeric_limits<hsize_t>::max();
    if (!h5::link_exists(file.get(), "/commit")) return kAll;
    const std::vector<std::string> keys = h5::read_order(dataset("/commit").get(), "groups", path);
    const auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end()) return kAll;
    const std::vector<std::int64_t> rows = numeric<std::int64_t>("/commit", kAll);
    const auto i = static_cast<std::size_t>(it - keys.begin());
    if (rows.size() < keys.size() || rows[i] < 0) bad("/commit does not match its groups (the log is damaged)");
    return static_cast<hsize_t>(rows[i]);
  }

  // Refuses to read `elems` elements of a dataset that the file does not hold. A damaged extent (or one a
  // fuzzer grew, or a writer extended without writing) can claim 10^8 rows of a log of kilobytes: reading them
  // allocated and filled gigabytes of fill values (30 s for one log; the fuzzer's slow input). Logs are never
  // compressed, so the storage HDF5 allocated bounds what is really there, up to one chunk (a SWMR writer
  // extends a dataset, then writes the chunk).
  void require_stored(hid_t d, const std::string& where, hsize_t elems) const {
    h5::Handle t = h5::own(H5Dget_type(d), H5Tclose, path, "cannot read the type of " + where);
    const double elem = static_cast<double>(H5Tget_size(t.get()));
    h5::Handle plist = h5::own(H5Dget_create_plist(d), H5Pclose, path, "cannot read the layout of " + where);
    double chunk = 0;
    if (H5Pget_layout(plist.get()) == H5D_CHUNKED) {
      hsize_t dims[H5S_MAX_RANK];
      const int rank = H5Pget_chunk(plist.get(), H5S_MAX_RANK, dims);
      chunk = rank > 0 ? elem : 0;
      for (int i = 0; i < rank; ++i) chunk *= static_cast<double>(dims[i]);
    }
    const double stored = static_cast<double>(H5Dget_storage_size(d));
    if (static_cast<double>(elems) * elem > stored + chunk)
      bad(where + " claims " + std::to_string(elems) + " values but the file stores " +
          std::to_string(static_cast<std::uint64_t>(stored)) + " bytes of it (the log is damaged)");
  }

  // The first `rows` rows (all if rows is max) of a numeric dataset, converted to T.
  template <class T>
  std::vector<T> numeric(const std::string& where, hsize_t rows, std::vector<hsize_t>* shape_out = nullptr) const {
    h5::Handle d = dataset(where);
    const H5T_class_t cls = type_class(d.get(), where);
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) bad(where + " is not numeric");
    if (std::is_integral_v<T> && cls != H5T_INTEGER) bad(where + " holds floats, expected integers");
    std::vector<hsize_t> dims = h5::extent(d.get(), path);
    if (dims.empty()) bad(where + " is a scalar, expected an array");
    dims[0] = std::min(dims[0], rows);
    if (shape_out) *shape_out = dims;
    hsize_t n = 1;
    for (hsize_t x : dims) n *= x;
    if (n == 0) return std::vector<T>();
    require_stored(d.get(), where, n);
    std::vector<T> out(static_cast<std::size_t>(n));
    h5::Handle fspace = h5::own(H5Dget_space(d.get()), H5Sclose, path, "cannot read " + where);
    const std::vector<hsize_t> start(dims.size(), 0);
    h5::check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, dims.data(), nullptr), path,
              "cannot select rows of " + where);
    h5::Handle mspace = h5::own(H5Screate_simple(1, &n, nullptr), H5Sclose, path, "cannot read " + where);
    const hid_t mtype = std::is_integral_v<T> ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    h5::check(H5Dread(d.get(), mtype, mspace.get(), fspace.get(), H5P_DEFAULT, out.data()), path,
              "cannot read " + where);
    return out;
  }

  // The first `rows` values of a 1-D string dataset (fixed-length or variable-length).
  std::vector<std::string> strings(const std::string& where, hsize_t rows) const {
    h5::Handle d = dataset(where);
    h5::Handle ftype = h5::own(H5Dget_type(d.get()), H5Tclose, path, "cannot read the type of " + where);
    if (H5Tget_class(ftype.get()) != H5T_STRING) bad(where + " is not a string dataset");
    std::vector<hsize_t> dims = h5::extent(d.get(), path);
    if (dims.size() != 1) bad(where + " is not 1-D");
    hsize_t n = std::min(dims[0], rows);
    std::vector<std::string> out;
    if (n == 0) return out;
    require_stored(d.get(), where, n);
    h5::Handle fspace = h5::own(H5Dget_space(d.get()), H5Sclose, path, "cannot read " + where);
    const hsize_t start = 0;
    h5::check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr), path,
              "cannot select rows of " + where);
    h5::Handle mspace = h5::own(H5Screate_simple(1, &n, nullptr), H5Sclose, path, "cannot read " + where);
    h5::Handle mtype = h5::own(H5Tcopy(ftype.get()), H5Tclose, path, "cannot read " + where);
    if (H5Tis_variable_str(ftype.get()) > 0) {
      std::vector<char*> ptrs(static_cast<std::size_t>(n), nullptr);
      h5::check(H5Dread(d.get(), mtype.get(), mspace.get(), fspace.get(), H5P_DEFAULT, ptrs.data()), path,
                "cannot read " + where);
      for (char* p : ptrs) out.emplace_back(p ? p : "");
      H5Dvlen_reclaim(mtype.get(), mspace.get(), H5P_DEFAULT, ptrs.data());
      return out;
    }
    const std::size_t width = H5Tget_size(ftype.get());
    std::vector<char> buf(static_cast<std::size_t>(n) * width);
    h5::check(H5Dread(d.get(), mtype.get(), mspace.get(), fspace.get(), H5P_DEFAULT, buf.data()), path,
              "cannot read " + where);
    for (std::size_t i = 0; i < n; ++i) {
      const char* p = buf.data() + i * width;
      out.emplace_back(p, static_cast<std::size_t>(std::find(p, p + width, '\0') - p));
    }
    return out;
  }
};

RunLogReader::RunLogReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  h5::silence_errors();
  impl_->path = path;
  h5::require_hdf5_file(path);
  // Bounded metadata retries: a damaged file fails here (or on a later read) instead of hanging.
  h5::Handle fapl = h5::reader_fapl(path);
  hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.get());
  impl_->swmr = fid >= 0;
  if (fid < 0) {
    const std::string first = h5::take_error();  // not written for SWMR (older format): open plainly
    fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
    if (fid < 0 && h5::take_error().find("already open for write") != std::string::npos) {
      // A writer killed while it held the file open in ordinary mode (older versions adding /summary in
      // place) leaves the superblock marked "open for write", which refuses both opens above. A live
      // writer in that mode holds the file lock, which still refuses this third open; a dead one does
      // not. Only that refusal is retried (a truncated or damaged file keeps its error). The mark is
      // ignored in memory only: a read-only open writes nothing (open_append repairs it, on its copy).
      hbool_t clear = true;
      h5::check(H5Pset(fapl.get(), "clear_status_flags", &clear), path, "cannot request to ignore the write mark");
      fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
      // That writer may have flushed metadata past the end of file its superblock records (an object
      // flushed without the superblock): read up to the real end of file (EOA = EOF, in memory only).
      if (fid >= 0 && H5Fincrement_filesize(fid, 0) < 0) {
        h5::take_error();
        H5Fclose(fid);
        fid = -1;
      }
    }
    if (fid < 0) {
      h5::take_error();
      impl_->bad("cannot be opened, the file is damaged (hdf5: " + first +
                 "); restore it or move it aside, then run again");
    }
  }
  impl_->file = h5::Handle(fid, H5Fclose);
  for (const char* g : {"/series", "/heads", "/tables", "/arrays", "/summary"})
    if (!h5::link_exists(fid, g)) impl_->bad(std::string("not a gaugelab run log (no group ") + g + ")");
}

RunLogReader::RunLogReader(RunLogReader&&) noexcept = default;
RunLogReader& RunLogReader::operator=(RunLogReader&&) noexcept = default;
RunLogReader::~RunLogReader() = default;

const std::string& RunLogReader::path() const { return impl_->path; }

RootAttrs RunLogReader::root() const {
  h5::silence_errors();
  const Impl& s = *impl_;
  const hid_t f = s.file.get();
  auto text = [&](const char* name) {
    const h5::Scalar v = h5::read_attr(f, name, s.path);
    if (const auto* t = std::get_if<std::string>(&v)) return *t;
    s.bad(std::string("root attribute '") + name + "' is not a string");
  };
  auto integer = [&](const char* name) -> std::int64_t {
    const h5::Scalar v = h5::read_attr(f, name, s.path);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<std::int64_t>(*u);
    s.bad(std::string("root attribute '") + name + "' is not an integer");
  };
  RootAttrs r;
  r.gaugelab_version = text("gaugelab_version");
  r.git_sha = text("git_sha");
  r.kind = text("kind");
  r.command = text("command");
  r.config_json = text("config_json");
  r.created_utc = text("created_utc");
  r.host = text("host");
  r.threads = integer("threads");
  r.seed = static_cast<std::uint64_t>(integer("seed"));
  return r;
}

std::vector<std::string> RunLogReader::series_names() const {
  return h5::read_order(impl_->group("/series").get(), "names", impl_->path);
}

std::uint64_t RunLogReader::series_length() const {
  const auto names = series_names();
  if (names.empty() && !h5::link_exists(impl_->file.get(), "/series/step")) return 0;
  hsize_t n = std::min(impl_->length("/series/step"), impl_->committed("series"));
  for (const auto& name : names) n = std::min(n, impl_->length("/series/" + name));
  return n;
}

SeriesData RunLogReader::series() const {
  SeriesData out;
  out.names = series_names();
  const hsize_t n = series_length();
  if (out.names.empty() && n == 0) return out;
  out.step = impl_->numeric<std::int64_t>("/series/step", n);
  for (const auto& name : out.names) {
    std::vector<hsize_t> shape;
    out.values.push_back(impl_->numeric<double>("/series/" + name, n, &shape));
    if (shape.size() != 1) impl_->bad("/series/" + name + " is not 1-D");
  }
  return out;
}

const std::vector<double>& SeriesData::at(const std::string& name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::out_of_range("no series '" + name + "'");
  return values[static_cast<std::size_t>(it - names.begin())];
}

std::vector<std::string> RunLogReader::heads_names() const {
  return h5::read_order(impl_->group("/heads").get(), "names", impl_->path);
}

std::vector<std::int64_t> RunLogReader::heads_step() const {
  hsize_t n = std::min(impl_->length("/heads/step"), impl_->committed("heads"));
  for (const auto& name : heads_names()) n = std::min(n, impl_->length("/heads/" + name));
  return impl_->numeric<std::int64_t>("/heads/step", n);
}

HeadsData RunLogReader::heads(const std::string& name) const {
  const hsize_t n = heads_step().size();
  std::vector<hsize_t> shape;
  HeadsData h;
  h.values = impl_->numeric<double>("/heads/" + name, n, &shape);
  if (shape.size() != 3) impl_->bad("/heads/" + name + " is not [record, layer, head]");
  h.records = shape[0];
  h.layers = shape[1];
  h.heads = shape[2];
  return h;
}

std::vector<std::string> RunLogReader::table_names() const {
  return h5::member_names(impl_->group("/tables").get(), impl_->path);
}

bool RunLogReader::has_table(const std::string& name) const {
  return h5::link_exists(impl_->file.get(), "/tables/" + name);
}

std::vector<Column> RunLogReader::table_columns(const std::string& name) const {
  if (!has_table(name)) impl_->bad("missing table /tables/" + name);
  std::vector<Column> cols;
  for (const auto& c : h5::read_order(impl_->group("/tables/" + name).get(), "columns", impl_->path)) {
    const std::string where = "/tables/" + name + "/" + c;
    h5::Handle d = impl_->dataset(where);
    h5::Handle t = h5::own(H5Dget_type(d.get()), H5Tclose, impl_->path, "cannot read the type of " + where);
    switch (H5Tget_class(t.get())) {
      case H5T_FLOAT: cols.push_back({c, DType::f64, 8}); break;
      case H5T_INTEGER: cols.push_back({c, DType::i64, 8}); break;
      case H5T_STRING: cols.push_back({c, DType::str, H5Tget_size(t.get())}); break;
      default: impl_->bad(where + " is not a float, integer or string column");
    }
  }
  return cols;
}

TableData RunLogReader::table(const std::string& name) const {
  TableData t;
  t.columns = table_columns(name);
  hsize_t n = impl_->committed("tables/" + name);
  for (const auto& c : t.columns) n = std::min(n, impl_->length("/tables/" + name + "/" + c.name));
  t.rows = t.columns.empty() ? 0 : n;
  for (const auto& c : t.columns) {
    const std::string where = "/tables/" + name + "/" + c.name;
    switch (c.type) {
      case DType::f64: t.data.emplace_back(impl_->numeric<double>(where, n)); break;
      case DType::i64: t.data.emplace_back(impl_->numeric<std::int64_t>(where, n)); break;
      case DType::str: t.data.emplace_back(impl_->strings(where, n)); break;
    }
  }
  return t;
}

const ColumnData& TableData::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return data[i];
  throw std::runtime_error("table has no column '" + name + "'");
}

const std::vector<double>& TableData::f64(const std::string& name) const {
  if (const auto* v = std::get_if<std::vector<double>>(&column(name))) return *v;
  throw std::runtime_error("column '" + name + "' is not f64");
}
const std::vector<std::int64_t>& TableData::i64(const std::string& name) const {
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&column(name))) return *v;
  throw std::runtime_error("column '" + name + "' is not i64");
}
const std::vector<std::string>& TableData::str(const std::string& name) const {
  if (const auto* v = std::get_if<std::vector<std::string>>(&column(name))) return *v;
  throw std::runtime_error("column '" + name + "' is not str");
}

std::vector<std::string> RunLogReader::array_names() const {
  return h5::member_names(impl_->group("/arrays").get(), impl_->path);
}

ArrayData<double> RunLogReader::array(const std::string& name) const {
  std::vector<hsize_t> shape;
  ArrayData<double> a;
  a.values = impl_->numeric<double>("/arrays/" + name, impl_->committed("arrays/" + name), &shape);
  a.shape.assign(shape.begin(), shape.end());
  return a;
}

ArrayData<std::int64_t> RunLogReader::array_i64(const std::string& name) const {
  std::vector<hsize_t> shape;
  ArrayData<std::int64_t> a;
  a.values = impl_->numeric<std::int64_t>("/arrays/" + name, impl_->committed("arrays/" + name), &shape);
  a.shape.assign(shape.begin(), shape.end());
  return a;
}

std::map<std::string, Cell> RunLogReader::summary() const {
  const Impl& s = *impl_;
  h5::Handle g = s.group("/summary");
  std::map<std::string, Cell> out;
  for (const auto& key : h5::attr_names(g.get(), s.path)) {
    const h5::Scalar v = h5::read_attr(g.get(), key, s.path);
    if (const auto* d = std::get_if<double>(&v)) out[key] = *d;
    else if (const auto* i = std::get_if<std::int64_t>(&v)) out[key] = *i;
    else if (const auto* u = std::get_if<std::uint64_t>(&v))
      out[key] = *u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                     ? Cell(static_cast<std::int64_t>(*u))
                     : Cell(static_cast<double>(*u));
    else out[key] = std::get<std::string>(v);
  }
  return out;
}

}  // namespace gaugelab::io
