// Thin helpers over the HDF5 C API used by the run log writer and reader.
//
// The C API (not the C++ wrapper) is used because SWMR (H5Fstart_swmr_write, H5Dflush, H5Drefresh)
// exists only there. HDF5's own error-stack printing is switched off; every failure becomes a
// std::runtime_error with one line "run log 'PATH': what (hdf5: innermost detail)".
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace gaugelab::io::h5 {

/// Switches off HDF5's automatic error printing for the calling thread (the error stack is per
/// thread in a thread-safe HDF5); every thread that calls HDF5 calls this first. Cheap when repeated.
void silence_errors();

/// Throws std::runtime_error("run log 'path': what (hdf5: detail)"); clears HDF5's error stack.
[[noreturn]] void fail(const std::string& path, const std::string& what);

/// The innermost message on HDF5's error stack (empty if none); clears the stack.
std::string take_error();

/// Throws a one-line error unless `path` exists and is an HDF5 file ("no such file", "not an HDF5 file").
void require_hdf5_file(const std::string& path);

/// An owned HDF5 identifier closed with the matching H5?close. Move-only.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; returns false if HDF5 reported an error while closing.
  bool reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Wraps `id` (throwing `fail(path, what)` if it is negative).
Handle own(hid_t id, Handle::Closer closer, const std::string& path, const std::string& what);
/// Throws `fail(path, what)` if rc < 0.
void check(herr_t rc, const std::string& path, const std::string& what);

/// A scalar attribute value as stored in a run log.
using Scalar = std::variant<double, std::int64_t, std::uint64_t, std::string>;

/// Read attempts of a SWMR reader on a metadata block whose checksum fails. HDF5 sleeps between
/// attempts, doubling from 1 ns, so its default of 100 never ends on a damaged file; 24 attempts
/// wait at most 2^24 ns (17 ms) per block, far longer than a live writer takes to finish a block.
constexpr unsigned kMetadataReadAttempts = 24;
/// File access list for reading: metadata checksum retries bounded by metadata_read_attempts().
Handle reader_fapl(const std::string& path);
/// The read attempts reader_fapl sets: kMetadataReadAttempts unless set_metadata_read_attempts changed it.
unsigned metadata_read_attempts();
/// Sets the read attempts of every later reader_fapl in this process (n >= 1; throws std::invalid_argument
/// otherwise). The fuzz targets set 1: a fuzzed file is never being written, so every retry re-reads the
/// same damaged bytes, reaches the same error and only adds the backoff's sleeps (~17 ms a block).
void set_metadata_read_attempts(unsigned n);
/// File access list with libver bounds [latest, latest] (required for SWMR).
Handle latest_fapl(const std::string& path);
/// Fixed-length, null-padded UTF-8 string type of `width` bytes.
Handle fixed_string_type(std::size_t width, const std::string& path);

bool link_exists(hid_t loc, const std::string& name);
/// Names of the links in group `loc` (sorted by name).
std::vector<std::string> member_names(hid_t loc, const std::string& path);
/// Names of the attributes on object `loc` (sorted by name).
std::vector<std::string> attr_names(hid_t loc, const std::string& path);

/// Creates (replacing any existing attribute of that name) a scalar attribute; strings are
/// variable-length UTF-8 so h5py reads them back as `str`.
void write_attr(hid_t loc, const std::string& name, const Scalar& value, const std::string& path);
/// Reads a scalar attribute of integer, float or string class.
Scalar read_attr(hid_t loc, const std::string& name, const std::string& path);

/// The declared order of a group's members: the JSON list of names in attribute `attr` (written on
/// /series and /heads as "names", on each table group as "columns"), or, if the attribute is
/// absent, the member names sorted, "step" excluded.
std::vector<std::string> read_order(hid_t group, const char* attr, const std::string& path);

/// Current extent of a dataset.
std::vector<hsize_t> extent(hid_t dset, const std::string& path);

}  // namespace gaugelab::io::h5
