#include "io/h5_helpers.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gaugelab::io::h5 {

namespace {

// At exit HDF5 closes whatever is still open. A file whose writes failed (a full disk) could not be
// closed and is left half torn down, and that exit-time cleanup crashed (SIGSEGV in H5F__close_cb)
// after the error had been reported. Every RunLog and reader closes its own files, so the cleanup
// is switched off; it must be before HDF5 initialises, hence a static initialiser.
[[maybe_unused]] const bool kNoExitCleanup = [] {
  H5dont_atexit();
  return true;
}();

}  // namespace

void silence_errors() {
  // This HDF5 is built thread-safe: every thread has its own error stack with printing switched
  // on, so a background flusher or an OpenMP worker would dump HDF5-DIAG traces unless each
  // thread switches printing off for itself.
  thread_local bool silenced = false;
  if (silenced) return;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  silenced = true;
}

namespace {

// Collects the description of the innermost (most specific) error on HDF5's stack.
herr_t innermost(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err->desc) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

// HDF5's POSIX driver describes a failed read or write with the time (and a newline), the file
// descriptor, buffer address and byte counts; what a user can act on is the system's message.
std::string tidy(std::string detail) {
  const std::string key = "error message = '";
  const std::size_t at = detail.find(key);
  if (at != std::string::npos) {
    const std::size_t from = at + key.size(), to = detail.find('\'', from);
    const std::size_t colon = detail.find(':');
    const std::string head = colon != std::string::npos && colon < at ? detail.substr(0, colon) : "I/O failed";
    detail = head + ": " + detail.substr(from, to == std::string::npos ? std::string::npos : to - from);
  }
  for (char& c : detail)
    if (c == '\n' || c == '\r') c = ' ';
  return detail;
}

}  // namespace

std::string take_error() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  return tidy(detail);
}

void fail(const std::string& path, const std::string& what) {
  const std::string detail = take_error();
  std::string msg = "run log '" + path + "': " + what;
  if (!detail.empty()) msg += " (hdf5: " + detail + ")";
  throw std::runtime_error(msg);
}

void require_hdf5_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::runtime_error("run log '" + path + "': no such file");
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error("run log '" + path + "': is a directory");
  const htri_t ok = H5Fis_hdf5(path.c_str());
  take_error();
  if (ok <= 0) throw std::runtime_error("run log '" + path + "': not an HDF5 file");
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

bool Handle::reset() {
  bool ok = true;
  if (id_ >= 0 && closer_) ok = closer_(id_) >= 0;
  id_ = H5I_INVALID_HID;
  return ok;
}

Handle own(hid_t id, Handle::Closer closer, const std::string& path, const std::string& what) {
  if (id < 0) fail(path, what);
  return Handle(id, closer);
}

void check(herr_t rc, const std::string& path, const std::string& what) {
  if (rc < 0) fail(path, what);
}

Handle latest_fapl(const std::string& path) {
  Handle fapl = own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, "cannot create a file access list");
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), path, "cannot set libver bounds");
  return fapl;
}

namespace {
std::atomic<unsigned> g_metadata_read_attempts{kMetadataReadAttempts};
}  // namespace

unsigned metadata_read_attempts() { return g_metadata_read_attempts.load(); }

void set_metadata_read_attempts(unsigned n) {
  if (n < 1) throw std::invalid_argument("metadata read attempts must be at least 1, not 0");
  g_metadata_read_attempts.store(n);
}

Handle reader_fapl(const std::string& path) {
  Handle fapl = own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, path, "cannot create a file access list");
  check(H5Pset_metadata_read_attempts(fapl.get(), metadata_read_attempts()), path, "cannot bound metadata retries");
  return fapl;
}

Handle fixed_string_type(std::size_t width, const std::string& path) {
  Handle t = own(H5Tcopy(H5T_C_S1), H5Tclose, path, "cannot copy the string type");
  check(H5Tset_size(t.get(), width), path, "cannot set string width");
  check(H5Tset_strpad(t.get(), H5T_STR_NULLPAD), path, "cannot set string padding");
  check(H5Tset_cset(t.get(), H5T_CSET_UTF8), path, "cannot set string charset");
  return t;
}

bool link_exists(hid_t loc, const std::string& name) {
  const htri_t r = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  return r > 0;
}

namespace {

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

}  // namespace

std::vector<std::string> member_names(hid_t loc, const std::string& path) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  check(H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_link, &names), path, "cannot list a group");
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> attr_names(hid_t loc, const std::string& path) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  check(H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr, &names), path, "cannot list attributes");
  std::sort(names.begin(), names.end());
  return names;
}

void write_attr(hid_t loc, const std::string& name, const Scalar& value, const std::string& path) {
  const std::string what = "cannot write attribute '" + name + "'";
  if (H5Aexists(loc, name.c_str()) > 0) check(H5Adelete(loc, name.c_str()), path, what);
  H5Eclear2(H5E_DEFAULT);
  Handle space = own(H5Screate(H5S_SCALAR), H5Sclose, path, what);
  Handle type;
  const void* buf = nullptr;
  const char* text = nullptr;
  if (const auto* d = std::get_if<double>(&value)) {
    type = own(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose, path, what);
    buf = d;
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    type = own(H5Tcopy(H5T_NATIVE_INT64), H5Tclose, path, what);
    buf = i;
  } else if (const auto* u = std::get_if<std::uint64_t>(&value)) {
    type = own(H5Tcopy(H5T_NATIVE_UINT64), H5Tclose, path, what);
    buf = u;
  } else {
    // A fixed-length UTF-8 string of the value's own length, null-padded. Not variable-length: those
    // live in the file's global heap, and libhdf5 1.10 reads a damaged global-heap object with a
    // memcpy of the length the file claims (a SIGSEGV in H5HG_read, found by the one-changed-byte test).
    const std::string& v = std::get<std::string>(value);
    type = fixed_string_type(std::max<std::size_t>(v.size(), 1), path);
    text = v.empty() ? "" : v.c_str();
    buf = text;
  }
  Handle attr = own(H5Acreate2(loc, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                    path, what);
  check(H5Awrite(attr.get(), type.get(), buf), path, what);
}

Scalar read_attr(hid_t loc, const std::string& name, const std::string& path) {
  const std::string what = "cannot read attribute '" + name + "'";
  if (H5Aexists(loc, name.c_str()) <= 0) fail(path, "missing attribute '" + name + "'");
  Handle attr = own(H5Aopen(loc, name.c_str(), H5P_DEFAULT), H5Aclose, path, what);
  Handle space = own(H5Aget_space(attr.get()), H5Sclose, path, what);
  if (H5Sget_simple_extent_npoints(space.get()) != 1) fail(path, "attribute '" + name + "' is not a scalar");
  Handle ftype = own(H5Aget_type(attr.get()), H5Tclose, path, what);
  switch (H5Tget_class(ftype.get())) {
    case H5T_INTEGER:
      if (H5Tget_sign(ftype.get()) == H5T_SGN_NONE) {
        std::uint64_t u = 0;
        check(H5Aread(attr.get(), H5T_NATIVE_UINT64, &u), path, what);
        return u;
      } else {
        std::int64_t i = 0;
        check(H5Aread(attr.get(), H5T_NATIVE_INT64, &i), path, what);
        return i;
      }
    case H5T_FLOAT: {
      double d = 0;
      check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &d), path, what);
      return d;
    }
    case H5T_STRING: {
      if (H5Tis_variable_str(ftype.get()) > 0) {
        Handle mtype = own(H5Tcopy(H5T_C_S1), H5Tclose, path, what);
        check(H5Tset_size(mtype.get(), H5T_VARIABLE), path, what);
        check(H5Tset_cset(mtype.get(), H5Tget_cset(ftype.get())), path, what);
        char* s = nullptr;
        check(H5Aread(attr.get(), mtype.get(), &s), path, what);
        std::string out = s ? s : "";
        H5free_memory(s);
        return out;
      }
      const std::size_t width = H5Tget_size(ftype.get());
      std::string out(width, '\0');
      check(H5Aread(attr.get(), ftype.get(), out.data()), path, what);
      out.resize(std::min(out.size(), out.find('\0')));
      return out;
    }
    default:
      fail(path, "attribute '" + name + "' is not a number or a string");
  }
}

std::vector<std::string> read_order(hid_t group, const char* attr, const std::string& path) {
  if (H5Aexists(group, attr) > 0) {
    const Scalar v = read_attr(group, attr, path);
    const auto* text = std::get_if<std::string>(&v);
    nlohmann::json j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    std::vector<std::string> names;
    if (!j.is_array()) fail(path, std::string("attribute '") + attr + "' is not a JSON list of names");
    for (const auto& e : j) {
      if (!e.is_string()) fail(path, std::string("attribute '") + attr + "' is not a JSON list of names");
      names.push_back(e.get<std::string>());
    }
    return names;
  }
  take_error();
  std::vector<std::string> names = member_names(group, path);
  names.erase(std::remove(names.begin(), names.end(), "step"), names.end());
  return names;
}

std::vector<hsize_t> extent(hid_t dset, const std::string& path) {
  Handle space = own(H5Dget_space(dset), H5Sclose, path, "cannot get a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(path, "cannot get a dataset's rank");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), path, "cannot get a dataset's extent");
  return dims;
}

}  // namespace gaugelab::io::h5
