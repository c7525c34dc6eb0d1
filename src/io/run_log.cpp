// RunLog: declarations, flushing and closing. Appends: run_log_append.cpp; creating and
// reopening: run_log_open.cpp.
#include "io/run_log.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "io/run_log_impl.hpp"

namespace gaugelab::io {

namespace {

void check_name(const RunLog::Impl& s, const std::string& name, const char* what) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    s.misuse(std::string("invalid ") + what + " name '" + name + "' (empty or contains '/')");
}

void check_unique(const RunLog::Impl& s, const std::vector<std::string>& names, const char* what) {
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second) s.misuse(std::string("duplicate ") + what + " name '" + n + "'");
}

}  // namespace

// ---------------------------------------------------------------- Impl helpers

void RunLog::Impl::require_open(const char* op) const {
  h5::silence_errors();  // the calling thread's own HDF5 error stack (appends come from any thread)
  if (closed) misuse(std::string(op) + " after close()");
  if (write_error) {
    write_error_delivered = true;
    std::rethrow_exception(write_error);
  }
}

void RunLog::Impl::start_flusher() {
  if (!(opts.flush_interval_s > 0.0)) return;  // 0: every append flushes, nothing is left waiting
  flusher = std::thread([this] {
    h5::silence_errors();
    const auto period = std::chrono::duration<double>(opts.flush_interval_s);
    // Waking at least this often keeps a huge interval (flushing left to the caller) from
    // overflowing the clock arithmetic; the elapsed-time test below decides whether to flush.
    const auto nap = std::min(period, std::chrono::duration<double>(60.0));
    std::unique_lock lk(mu);
    while (!stop && !write_error) {
      wake.wait_for(lk, nap);
      if (stop || closed) break;
      bool pending = false;
      each_appender([&](h5::Appender& a) { pending = pending || a.pending_rows() > 0; });
      if (pending && std::chrono::steady_clock::now() - last_flush >= period) {
        try {
          write_and_flush(/*to_caller=*/false);
        } catch (...) {
          // recorded in write_error; the next call on the log (any thread) reports it
        }
      }
    }
  });
}

void RunLog::Impl::stop_flusher() {
  {
    std::lock_guard lk(mu);
    stop = true;
  }
  wake.notify_all();
  if (flusher.joinable()) flusher.join();
}

void RunLog::Impl::require_declaring(const char* op) const {
  require_open(op);
  if (swmr) misuse(std::string(op) + " after start(): HDF5 SWMR cannot create datasets once started");
}

h5::Handle RunLog::Impl::group(const char* name) const {
  return h5::own(H5Gopen2(file.get(), name, H5P_DEFAULT), H5Gclose, path, std::string("cannot open group ") + name);
}

void RunLog::Impl::write_order(const char* group_name, const char* attr, const std::vector<std::string>& names) {
  h5::Handle g = group(group_name);
  h5::write_attr(g.get(), attr, nlohmann::json(names).dump(), path);
}

void RunLog::Impl::write_and_flush(bool to_caller) {
  if (write_error) {
    write_error_delivered = write_error_delivered || to_caller;
    std::rethrow_exception(write_error);
  }
  try {
    each_appender([](h5::Appender& a) { a.write(); });
    each_appender([](h5::Appender& a) { a.flush(); });
    for (auto& [name, a] : fixed_arrays) h5::check(H5Dflush(a.dset.get()), path, "cannot flush /arrays/" + name);
    write_commit();
  } catch (...) {
    write_error = std::current_exception();
    write_error_delivered = to_caller;
    throw;
  }
  last_flush = std::chrono::steady_clock::now();
}

std::vector<std::string> RunLog::Impl::commit_groups() const {
  std::vector<std::string> keys;
  if (series_step) keys.emplace_back("series");
  if (heads_step) keys.emplace_back("heads");
  for (const auto& [name, t] : tables) keys.push_back("tables/" + name);
  for (const auto& [name, a] : rows_arrays) keys.push_back("arrays/" + name);
  return keys;
}

std::vector<std::int64_t> RunLog::Impl::written_rows() const {
  auto shortest = [](auto begin, auto end, hsize_t n) {
    for (auto it = begin; it != end; ++it) n = std::min(n, it->written_rows());
    return static_cast<std::int64_t>(n);
  };
  std::vector<std::int64_t> rows;
  if (series_step) rows.push_back(shortest(series.begin(), series.end(), series_step->written_rows()));
  if (heads_step) rows.push_back(shortest(heads.begin(), heads.end(), heads_step->written_rows()));
  for (const auto& [name, t] : tables) rows.push_back(shortest(t.data.begin(), t.data.end(), t.data.front().written_rows()));
  for (const auto& [name, a] : rows_arrays) rows.push_back(static_cast<std::int64_t>(a.written_rows()));
  return rows;
}

void RunLog::Impl::declare_commit() {
  const std::vector<std::string> keys = commit_groups();
  const std::string what = "cannot create /commit";
  if (h5::link_exists(file.get(), "/commit")) {
    commit = h5::own(H5Dopen2(file.get(), "/commit", H5P_DEFAULT), H5Dclose, path, "cannot open /commit");
    if (h5::read_order(commit.get(), "groups", path) == keys) {
      commit_keys = keys;
      return;
    }
    commit.reset();
    h5::check(H5Ldelete(file.get(), "/commit", H5P_DEFAULT), path, "cannot replace /commit");
  }
  const hsize_t n = std::max<std::size_t>(keys.size(), 1);
  h5::Handle space = h5::own(H5Screate_simple(1, &n, nullptr), H5Sclose, path, what);
  commit = h5::own(H5Dcreate2(file.get(), "/commit", H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Dclose, path, what);
  h5::write_attr(commit.get(), "groups", nlohmann::json(keys).dump(), path);
  commit_keys = keys;
}

void RunLog::Impl::write_commit() {
  if (!commit.valid() || commit_keys.empty()) return;
  const std::vector<std::int64_t> rows = written_rows();
  h5::check(H5Dwrite(commit.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), path,
            "cannot write /commit");
  h5::check(H5Dflush(commit.get()), path, "cannot flush /commit");
}

void RunLog::Impl::after_append(const h5::Appender& a) {
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - last_flush;
  if (since.count() >= opts.flush_interval_s || a.pending_rows() >= opts.max_buffered_rows) write_and_flush();
}

void RunLog::Impl::write_summary(hid_t g) {
  for (const auto& [key, value] : summary) {
    h5::Scalar v;
    if (const auto* d = std::get_if<double>(&value)) v = *d;
    else if (const auto* i = std::get_if<std::int64_t>(&value)) v = *i;
    else v = std::get<std::string>(value);
    h5::write_attr(g, key, v, path);
  }
}

// ---------------------------------------------------------------- declarations

void RunLog::declare_series(const std::vector<std::string>& names) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_declaring("declare_series");
  check_unique(s, names, "series");
  for (const auto& n : names) {
    check_name(s, n, "series");
    if (n == "step") s.misuse("series name 'step' is reserved for /series/step");
  }
  h5::Handle g = s.group("/series");
  if (!s.series_step)
    s.series_step = h5::Appender::create(g.get(), "step", DType::i64, 0, {}, s.opts.series_chunk, s.path,
                                         "/series/step");
  for (const auto& n : names) {
    if (std::find(s.series_names.begin(), s.series_names.end(), n) != s.series_names.end()) continue;
    if (s.series_step->rows() > 0)
      s.misuse("cannot add series '" + n + "': /series already has " + std::to_string(s.series_step->rows()) +
               " rows");
    s.series.push_back(h5::Appender::create(g.get(), n, DType::f64, 0, {}, s.opts.series_chunk, s.path,
                                            "/series/" + n));
    s.series_names.push_back(n);
  }
  s.write_order("/series", "names", s.series_names);
}

void RunLog::declare_heads(const std::vector<std::string>& names, int layers, int heads) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_declaring("declare_heads");
  check_unique(s, names, "heads");
  if (layers < 1 || heads < 1) s.misuse("declare_heads needs layers >= 1 and heads >= 1");
  for (const auto& n : names) {
    check_name(s, n, "heads");
    if (n == "step") s.misuse("heads name 'step' is reserved for /heads/step");
  }
  const std::vector<hsize_t> shape{static_cast<hsize_t>(layers), static_cast<hsize_t>(heads)};
  h5::Handle g = s.group("/heads");
  if (!s.heads_step)
    s.heads_step = h5::Appender::create(g.get(), "step", DType::i64, 0, {}, s.opts.heads_chunk, s.path, "/heads/step");
  for (const auto& n : names) {
    const auto it = std::find(s.heads_names.begin(), s.heads_names.end(), n);
    if (it != s.heads_names.end()) {
      if (s.heads[static_cast<std::size_t>(it - s.heads_names.begin())].row_shape() != shape)
        s.misuse("/heads/" + n + " exists with a different [layers, heads] shape");
      continue;
    }
    if (s.heads_step->rows() > 0)
      s.misuse("cannot add heads '" + n + "': /heads already has " + std::to_string(s.heads_step->rows()) + " records");
    s.heads.push_back(h5::Appender::create(g.get(), n, DType::f64, 0, shape, s.opts.heads_chunk, s.path, "/heads/" + n));
    s.heads_names.push_back(n);
  }
  s.write_order("/heads", "names", s.heads_names);
}

void RunLog::declare_table(const std::string& table, const std::vector<Column>& cols) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_declaring("declare_table");
  check_name(s, table, "table");
  if (cols.empty()) s.misuse("table '" + table + "' needs at least one column");
  std::vector<std::string> names;
  for (const auto& c : cols) {
    check_name(s, c.name, "column");
    if (c.type == DType::str && c.width == 0) s.misuse("string column '" + c.name + "' needs width > 0");
    names.push_back(c.name);
  }
  check_unique(s, names, "column");
  if (const auto it = s.tables.find(table); it != s.tables.end()) {
    const auto& have = it->second.cols;
    bool same = have.size() == cols.size();
    for (std::size_t i = 0; same && i < cols.size(); ++i)
      same = have[i].name == cols[i].name && have[i].type == cols[i].type &&
             (cols[i].type != DType::str || have[i].width == cols[i].width);
    if (!same) s.misuse("table '" + table + "' exists with different columns");
    return;
  }
  h5::Handle tg = s.group("/tables");
  h5::Handle g = h5::own(H5Gcreate2(tg.get(), table.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                         s.path, "cannot create /tables/" + table);
  Impl::Table t;
  t.cols = cols;
  for (const auto& c : cols)
    t.data.push_back(h5::Appender::create(g.get(), c.name, c.type, c.width, {}, s.opts.table_chunk, s.path,
                                          "/tables/" + table + "/" + c.name));
  h5::write_attr(g.get(), "columns", nlohmann::json(names).dump(), s.path);
  s.tables.emplace(table, std::move(t));
}

void RunLog::declare_array(const std::string& name, const std::vector<std::uint64_t>& shape, DType type) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_declaring("declare_array");
  check_name(s, name, "array");
  if (type == DType::str) s.misuse("array '" + name + "': only f64 and i64 arrays are supported");
  if (shape.empty()) s.misuse("array '" + name + "' needs a shape of rank >= 1");
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  if (const auto it = s.fixed_arrays.find(name); it != s.fixed_arrays.end()) {
    if (it->second.shape != dims || it->second.type != type)
      s.misuse("/arrays/" + name + " exists with a different shape or type");
    return;
  }
  if (s.rows_arrays.count(name)) s.misuse("/arrays/" + name + " exists as an extendable array");
  const std::string what = "cannot create /arrays/" + name;
  h5::Handle space = h5::own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose, s.path,
                             what);
  // Storage allocated at creation: a later write_array changes raw data only, never metadata (SWMR-safe).
  h5::Handle dcpl = h5::own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, s.path, what);
  h5::check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), s.path, what);
  h5::Handle g = s.group("/arrays");
  const hid_t ftype = type == DType::f64 ? H5T_IEEE_F64LE : H5T_STD_I64LE;
  Impl::FixedArray a;
  a.dset = h5::own(H5Dcreate2(g.get(), name.c_str(), ftype, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                   H5Dclose, s.path, what);
  a.shape = dims;
  a.type = type;
  s.fixed_arrays.emplace(name, std::move(a));
}

void RunLog::declare_rows_array(const std::string& name, const std::vector<std::uint64_t>& row_shape, DType type) {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_declaring("declare_rows_array");
  check_name(s, name, "array");
  if (type == DType::str) s.misuse("array '" + name + "': only f64 and i64 arrays are supported");
  const std::vector<hsize_t> dims(row_shape.begin(), row_shape.end());
  if (const auto it = s.rows_arrays.find(name); it != s.rows_arrays.end()) {
    if (it->second.row_shape() != dims || it->second.type() != type)
      s.misuse("/arrays/" + name + " exists with a different row shape or type");
    return;
  }
  if (s.fixed_arrays.count(name)) s.misuse("/arrays/" + name + " exists as a fixed-shape array");
  h5::Handle g = s.group("/arrays");
  s.rows_arrays.emplace(name, h5::Appender::create(g.get(), name, type, 0, dims, s.opts.array_chunk, s.path,
                                                   "/arrays/" + name));
}

void RunLog::start() {
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  s.require_open("start()");
  if (s.swmr) s.misuse("start() called twice");
  s.declare_commit();
  s.write_and_flush();
  h5::check(H5Fstart_swmr_write(s.file.get()), s.path, "cannot start SWMR writing");
  s.swmr = true;
  s.publish();  // a SWMR log from here on: it may stand at its path (see run_log_staging.cpp)
}

// ---------------------------------------------------------------- flush / close

void RunLog::flush() {
  std::lock_guard lk(impl_->mu);
  impl_->require_open("flush()");
  impl_->write_and_flush();
}

void RunLog::close() {
  if (!impl_) return;  // moved from
  h5::silence_errors();
  impl_->stop_flusher();
  std::lock_guard lk(impl_->mu);
  Impl& s = *impl_;
  if (s.closed) return;
  s.closed = true;
  std::exception_ptr err = s.write_error;
  if (!err) {
    try {
      s.write_and_flush(/*to_caller=*/false);
    } catch (...) {
      err = std::current_exception();
    }
  }
  s.each_appender([](h5::Appender& a) { a.close(); });
  s.fixed_arrays.clear();
  s.commit.reset();
  if (!err && !s.summary.empty()) {
    try {
      if (s.swmr) {  // attributes cannot be created under SWMR: reopen the file in ordinary mode
        if (!s.file.reset()) h5::fail(s.path, "cannot close the file");
        // Not in place: a log standing at its path gets a copy that is renamed over it once closed
        // (run_log_staging.cpp). One still at its staging name (its rename refused) is this run's alone.
        if (s.staging.empty()) {
          s.replaced = std::move(s.lock);  // held on the old file until the rename
          s.stage_copy();
        }
        h5::Handle fapl = h5::latest_fapl(s.path);
        s.file = h5::own(H5Fopen(s.staging.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, s.path,
                         "cannot reopen the file to write /summary (as '" + s.staging + "')");
      }
      s.write_summary(s.group("/summary").get());
    } catch (...) {
      err = std::current_exception();
    }
  }
  const bool closed_ok = !s.file.valid() || s.file.reset();
  if (!s.staging.empty() && !s.publish_refused) {
    if ((err || !closed_ok) && s.staged_copy) {
      std::error_code ec;  // a copy that failed is dropped: the log at its path stays as it was
      std::filesystem::remove(s.staging, ec);
      s.staging.clear();
    } else {  // after the file is closed: renamed over its path only once consistent
      try {
        s.publish();  // a new log never started is published as it is, as start() would
      } catch (...) {
        if (!err) err = std::current_exception();
      }
    }
  }
  s.replaced.release();
  s.lock.release();
  if (err && err == s.write_error && s.write_error_delivered) return;  // the caller has had this error
  if (err) std::rethrow_exception(err);
  if (!closed_ok) h5::fail(s.path, "cannot close the file");
}

RunLog::RunLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) { impl_->start_flusher(); }
RunLog::RunLog(RunLog&&) noexcept = default;

RunLog& RunLog::operator=(RunLog&& o) noexcept {
  if (this != &o) {
    try {
      close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
    impl_ = std::move(o.impl_);
  }
  return *this;
}

RunLog::~RunLog() {
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

// ---------------------------------------------------------------- introspection

const std::string& RunLog::path() const { return impl_->path; }
bool RunLog::started() const {
  std::lock_guard lk(impl_->mu);
  return impl_->swmr;
}
std::vector<std::string> RunLog::series_names() const {
  std::lock_guard lk(impl_->mu);
  return impl_->series_names;
}
std::vector<std::string> RunLog::heads_names() const {
  std::lock_guard lk(impl_->mu);
  return impl_->heads_names;
}
std::vector<std::string> RunLog::table_names() const {
  std::lock_guard lk(impl_->mu);
  std::vector<std::string> out;
  for (const auto& [name, t] : impl_->tables) out.push_back(name);
  return out;
}
std::vector<Column> RunLog::table_columns(const std::string& table) const {
  std::lock_guard lk(impl_->mu);
  const auto it = impl_->tables.find(table);
  if (it == impl_->tables.end()) impl_->misuse("no table '" + table + "'");
  return it->second.cols;
}
std::uint64_t RunLog::series_rows() const {
  std::lock_guard lk(impl_->mu);
  return impl_->series_step ? impl_->series_step->rows() : 0;
}
std::uint64_t RunLog::table_rows(const std::string& table) const {
  std::lock_guard lk(impl_->mu);
  const auto it = impl_->tables.find(table);
  if (it == impl_->tables.end()) impl_->misuse("no table '" + table + "'");
  return it->second.data.front().rows();
}

}  // namespace gaugelab::io
