// RunLog::create (new log, root attributes, the five groups) and RunLog::open_append (resume).
#include <cmath>
#include <filesystem>
#include <map>

#include "io/build_info.hpp"
#include "io/run_log.hpp"
#include "io/run_log_impl.hpp"

namespace gaugelab::io {

namespace {

constexpr const char* kGroups[] = {"/series", "/heads", "/tables", "/arrays", "/summary"};
// h5clear's default EOA increment when repairing a file whose writer died: space the dead writer
// may have allocated past the recorded end of file is never reused for new objects.
constexpr hsize_t kRepairEoaIncrement = hsize_t{1} << 20;

std::unique_ptr<RunLog::Impl> make_impl(const std::string& path, const RunLog::Options& opts) {
  auto s = std::make_unique<RunLog::Impl>();
  s->path = path;
  s->opts = opts;
  if (!(opts.flush_interval_s >= 0.0) || !std::isfinite(opts.flush_interval_s))
    s->misuse("Options::flush_interval_s must be a finite number >= 0");
  if (opts.max_buffered_rows < 1 || opts.series_chunk < 1 || opts.heads_chunk < 1 || opts.table_chunk < 1 ||
      opts.array_chunk < 1)
    s->misuse("Options: buffer and chunk sizes must be >= 1");
  return s;
}

// Opens every dataset already in the file so that appends continue them.
void discover(RunLog::Impl& s) {
  for (const char* g : kGroups)
    if (!h5::link_exists(s.file.get(), g)) s.misuse(std::string("not a gaugelab run log (no group ") + g + ")");
  {
    h5::Handle g = s.group("/series");
    s.series_names = h5::read_order(g.get(), "names", s.path);
    for (const auto& n : s.series_names) {
      s.series.push_back(h5::Appender::open(g.get(), n, s.path, "/series/" + n));
      if (s.series.back().type() != DType::f64 || !s.series.back().row_shape().empty())
        s.misuse("/series/" + n + " is not a 1-D float64 dataset");
    }
    if (!s.series_names.empty() || h5::link_exists(g.get(), "step"))
      s.series_step = h5::Appender::open(g.get(), "step", s.path, "/series/step");
  }
  {
    h5::Handle g = s.group("/heads");
    s.heads_names = h5::read_order(g.get(), "names", s.path);
    for (const auto& n : s.heads_names) {
      s.heads.push_back(h5::Appender::open(g.get(), n, s.path, "/heads/" + n));
      if (s.heads.back().type() != DType::f64 || s.heads.back().row_shape().size() != 2)
        s.misuse("/heads/" + n + " is not a float64 [record, layer, head] dataset");
    }
    if (!s.heads_names.empty() || h5::link_exists(g.get(), "step"))
      s.heads_step = h5::Appender::open(g.get(), "step", s.path, "/heads/step");
  }
  h5::Handle tg = s.group("/tables");
  for (const auto& table : h5::member_names(tg.get(), s.path)) {
    h5::Handle g = h5::own(H5Gopen2(tg.get(), table.c_str(), H5P_DEFAULT), H5Gclose, s.path,
                           "cannot open /tables/" + table);
    RunLog::Impl::Table t;
    for (const auto& c : h5::read_order(g.get(), "columns", s.path)) {
      t.data.push_back(h5::Appender::open(g.get(), c, s.path, "/tables/" + table + "/" + c));
      t.cols.push_back(Column{c, t.data.back().type(), t.data.back().width()});
    }
    if (t.cols.empty()) s.misuse("/tables/" + table + " has no columns");
    s.tables.emplace(table, std::move(t));
  }
  h5::Handle ag = s.group("/arrays");
  for (const auto& name : h5::member_names(ag.get(), s.path)) {
    const std::string where = "/arrays/" + name;
    h5::Handle d = h5::own(H5Dopen2(ag.get(), name.c_str(), H5P_DEFAULT), H5Dclose, s.path, "cannot open " + where);
    h5::Handle space = h5::own(H5Dget_space(d.get()), H5Sclose, s.path, "cannot read the shape of " + where);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 1) s.misuse(where + " is not an array of rank >= 1");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank)), maxdims(dims.size());
    h5::check(H5Sget_simple_extent_dims(space.get(), dims.data(), maxdims.data()), s.path, "cannot read " + where);
    if (maxdims[0] == H5S_UNLIMITED) {
      s.rows_arrays.emplace(name, h5::Appender::open(ag.get(), name, s.path, where));
      continue;
    }
    h5::Handle type = h5::own(H5Dget_type(d.get()), H5Tclose, s.path, "cannot read the type of " + where);
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) s.misuse(where + " is not a float64 or int64 array");
    RunLog::Impl::FixedArray a{std::move(d), dims, cls == H5T_FLOAT ? DType::f64 : DType::i64};
    s.fixed_arrays.emplace(name, std::move(a));
  }
}

// /commit's row count per group (RunLog::Impl::commit); empty for a log written before /commit existed.
std::map<std::string, hsize_t> read_commit(const RunLog::Impl& s) {
  std::map<std::string, hsize_t> out;
  if (!h5::link_exists(s.file.get(), "/commit")) return out;
  h5::Handle d = h5::own(H5Dopen2(s.file.get(), "/commit", H5P_DEFAULT), H5Dclose, s.path, "cannot open /commit");
  const std::vector<std::string> keys = h5::read_order(d.get(), "groups", s.path);
  const std::vector<hsize_t> dims = h5::extent(d.get(), s.path);
  if (dims.size() != 1 || dims[0] < keys.size()) s.misuse("/commit does not match its groups (the log is damaged)");
  std::vector<std::int64_t> rows(static_cast<std::size_t>(dims[0]));
  if (!rows.empty())
    h5::check(H5Dread(d.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), s.path,
              "cannot read /commit");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (rows[i] < 0) s.misuse("/commit does not match its groups (the log is damaged)");
    out[keys[i]] = static_cast<hsize_t>(rows[i]);
  }
  return out;
}

// A writer killed between the flushes of two datasets can leave one a few rows ahead, and one whose
// flush failed part-way can leave extents ahead of the data (rows past /commit's count): cut every
// group back to its shortest member and to its committed rows, so appends keep rows aligned and
// overwrite what was never confirmed written.
void even_out(std::vector<h5::Appender*> group, const std::map<std::string, hsize_t>& commit, const std::string& key) {
  if (group.empty()) return;
  hsize_t n = group.front()->rows();
  for (auto* a : group) n = std::min(n, a->rows());
  if (const auto it = commit.find(key); it != commit.end()) n = std::min(n, it->second);
  for (auto* a : group)
    if (a->rows() != n) a->truncate(n);
}

}  // namespace

RunLog RunLog::create(const std::string& path, const Provenance& prov, bool force, Options opts) {
  h5::silence_errors();
  auto s = make_impl(path, opts);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    if (!force) s->misuse("already exists (use --force to replace it)");
    if (fs::is_directory(path, ec)) s->misuse("is a directory");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::exists(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) s->misuse("cannot create directory '" + parent.string() + "': " + ec.message());
  }
  if (fs::exists(path, ec)) s->replaced = WriterLock::acquire(path);  // refuse to replace a log another process writes
  s->stage_new();  // built beside `path`, renamed over it by start() (run_log_staging.cpp)
  h5::Handle fapl = h5::latest_fapl(path);
  s->file = h5::own(H5Fcreate(s->staging.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), H5Fclose, path,
                    "cannot create the file (as '" + s->staging + "')");
  s->lock = WriterLock::acquire(s->staging);
  const hid_t root = s->file.get();
  h5::write_attr(root, "gaugelab_version", std::string(kVersion), path);
  h5::write_attr(root, "git_sha", std::string(git_sha()), path);
  h5::write_attr(root, "kind", prov.kind, path);
  h5::write_attr(root, "command", shell_join(prov.argv), path);
  h5::write_attr(root, "config_json", prov.config.dump(), path);
  h5::write_attr(root, "created_utc", utc_now_iso8601(), path);
  h5::write_attr(root, "host", hostname(), path);
  h5::write_attr(root, "threads", std::int64_t{prov.threads}, path);
  h5::write_attr(root, "seed", prov.seed, path);
  for (const char* g : kGroups)
    h5::own(H5Gcreate2(root, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, path,
            std::string("cannot create group ") + g);
  return RunLog(std::move(s));
}

RunLog RunLog::open_append(const std::string& path, Options opts) {
  h5::silence_errors();
  auto s = make_impl(path, opts);
  h5::require_hdf5_file(path);
  s->replaced = WriterLock::acquire(path);  // refuses a log another process writes
  s->stage_copy();  // repaired, cut and declared on a copy, renamed over `path` by start()
  const std::string& file = s->staging;
  h5::Handle fapl = h5::latest_fapl(path);
  hid_t fid = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl.get());
  if (fid < 0) {
    // A writer that died (SIGKILL) leaves the superblock marked "open for SWMR write". Clear that
    // mark and extend the EOA past the end of file, as `h5clear -s -i` does (clearing alone loses
    // the rows written after the last superblock update).
    const std::string first = h5::take_error();
    hbool_t clear = true;
    h5::check(H5Pset(fapl.get(), "clear_status_flags", &clear), path, "cannot request a consistency-flag repair");
    fid = H5Fopen(file.c_str(), H5F_ACC_RDWR, fapl.get());
    if (fid < 0) {
      h5::take_error();
      throw std::runtime_error("run log '" + path + "': cannot open for appending (hdf5: " + first + ")");
    }
    s->file = h5::Handle(fid, H5Fclose);
    h5::check(H5Fincrement_filesize(fid, kRepairEoaIncrement), path, "cannot repair the end-of-file address");
  } else {
    s->file = h5::Handle(fid, H5Fclose);
  }
  discover(*s);
  const std::map<std::string, hsize_t> commit = read_commit(*s);
  std::vector<h5::Appender*> series, heads;
  for (auto& a : s->series) series.push_back(&a);
  if (s->series_step) series.push_back(&*s->series_step);
  for (auto& a : s->heads) heads.push_back(&a);
  if (s->heads_step) heads.push_back(&*s->heads_step);
  even_out(series, commit, "series");
  even_out(heads, commit, "heads");
  for (auto& [name, t] : s->tables) {
    std::vector<h5::Appender*> cols;
    for (auto& a : t.data) cols.push_back(&a);
    even_out(cols, commit, "tables/" + name);
  }
  for (auto& [name, a] : s->rows_arrays) even_out({&a}, commit, "arrays/" + name);
  return RunLog(std::move(s));
}

}  // namespace gaugelab::io
