// Where a run log is written in HDF5's ordinary (non-SWMR) mode: never at its path. HDF5 orders its
// writes for crash consistency only under SWMR; a writer killed in ordinary mode can leave metadata
// half flushed (wrong checksums, objects past the recorded end of file, the "open for write" mark).
// So a new log is built at PATH.creating-PID, a resumed one is copied there first, and /summary is
// added to such a copy; each is renamed over PATH once it is SWMR (start()) or closed. A kill at any
// moment leaves PATH as it was (absent, the old log, or a SWMR log flushed up to its last flush), and
// at worst a staging file, removed by the next writer of PATH.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>  // renameat2, RENAME_NOREPLACE (glibc 2.28, _GNU_SOURCE)
#include <cstring>
#include <filesystem>
#include <fcntl.h>

#include "io/run_log_impl.hpp"

namespace gaugelab::io {

namespace {

namespace fs = std::filesystem;

constexpr const char* kStagingInfix = ".creating-";

// Removes what writers of `path` killed before their rename left: a staging file whose writer lock
// is free and whose process is gone (or is this one: a PID reused). A writer still running holds its
// lock, or is alive in the moment between creating its file and locking it.
void remove_stale_staging(const std::string& path) {
  const fs::path p(path);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string prefix = p.filename().string() + kStagingInfix;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && !(::kill(pid, 0) != 0 && errno == ESRCH)) continue;
    try {
      WriterLock probe = WriterLock::acquire(e.path().string());
    } catch (const std::runtime_error&) {
      continue;  // locked by a live writer (or unreadable): leave it
    }
    std::error_code rm;
    fs::remove(e.path(), rm);
  }
}

}  // namespace

void RunLog::Impl::stage_new() {
  remove_stale_staging(path);
  staging = path + kStagingInfix + std::to_string(::getpid());
  std::error_code ec;
  replaces = fs::exists(path, ec);
  staged_copy = false;
}

void RunLog::Impl::stage_copy() {
  stage_new();
  std::error_code ec;
  fs::copy_file(path, staging, ec);
  if (ec) {
    std::error_code rm;
    fs::remove(staging, rm);
    const std::string to = staging;
    staging.clear();
    misuse("cannot copy it to '" + to + "' to write there: " + ec.message());
  }
  replaces = staged_copy = true;
  lock = WriterLock::acquire(staging);
}

void RunLog::Impl::discard_unpublished() noexcept {
  if (closed || staging.empty()) return;
  std::error_code ec;
  fs::remove(staging, ec);  // nothing at `path` was touched
}

void RunLog::Impl::publish() {
  if (staging.empty() || publish_refused) return;
  publish_refused = true;  // until the rename below succeeds
  if (replaces) {
    if (::rename(staging.c_str(), path.c_str()) != 0)
      misuse("cannot rename '" + staging + "' to it: " + std::strerror(errno));
  } else if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    if (err == EEXIST) misuse("appeared while this run was creating it; this run's log is kept as '" + staging + "'");
    if (err != EINVAL && err != ENOSYS)  // else a file system without RENAME_NOREPLACE: check, then rename
      misuse("cannot rename '" + staging + "' to it: " + std::strerror(err));
    std::error_code ec;
    if (fs::exists(path, ec))
      misuse("appeared while this run was creating it; this run's log is kept as '" + staging + "'");
    if (::rename(staging.c_str(), path.c_str()) != 0)
      misuse("cannot rename '" + staging + "' to it: " + std::strerror(errno));
  }
  staging.clear();
  publish_refused = false;
  replaced.release();
}

}  // namespace gaugelab::io
