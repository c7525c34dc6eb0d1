// Marks a run log as having a live writer, so a second writer (a resume started while the run
// still goes, or --force over a running log) is refused instead of corrupting the file.
//
// HDF5 1.10 cannot tell: a SWMR writer releases its file lock once open, and a killed writer
// leaves the same "open for writing" mark as a live one. This is a Linux open-file-description
// lock on one byte far past any data: it neither touches the file's contents nor HDF5's own
// flock, and the kernel drops it when the writer exits or is killed, so it is never stale.
// On file systems without such locks it degrades to no protection.
#pragma once

#include <string>

namespace gaugelab::io {

class WriterLock {
 public:
  WriterLock() = default;
  /// Locks the existing file `path`; throws std::runtime_error("run log 'path': is being written
  /// by another process") if another writer holds it.
  static WriterLock acquire(const std::string& path);
  WriterLock(WriterLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  WriterLock& operator=(WriterLock&& o) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock() { release(); }
  void release();

 private:
  int fd_ = -1;
};

}  // namespace gaugelab::io
