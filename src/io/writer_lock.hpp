// Marks an output as having a live writer, so a second gaugelab process writing there is refused
// before it touches anything. Two kinds, one descriptor held until release:
//
// A run log (acquire): a resume started while the run still goes, or --force over a running log.
// HDF5 1.10 cannot tell: a SWMR writer releases its file lock once open, and a killed writer
// leaves the same "open for writing" mark as a live one. This is a Linux open-file-description
// lock on one byte far past any data: it neither touches the file's contents nor HDF5's own
// flock, and the kernel drops it when the writer exits or is killed, so it is never stale.
// On file systems without such locks it degrades to no protection.
//
// An output directory (acquire_dir: a training run, a prepared corpus): a second `train --resume`,
// `train --force` over a live run, a second `prepare`. flock(2) on the directory itself: no file is
// added to it, the kernel drops it when the writer exits or is killed, a child does not inherit it
// (close-on-exec); without flock support it degrades to no protection.
#pragma once

#include <string>

namespace gaugelab::io {

class WriterLock {
 public:
  WriterLock() = default;
  /// Locks the existing file `path`; throws std::runtime_error("run log 'path': is being written
  /// by another process") if another writer holds it.
  static WriterLock acquire(const std::string& path);
  /// Creates `dir` (and its parents) if missing and locks it; throws std::runtime_error("'dir': is
  /// being written by another gaugelab process (WHAT)") if another process holds the lock.
  /// `what` names the verb for the message, e.g. "a training run".
  static WriterLock acquire_dir(const std::string& dir, const std::string& what);
  WriterLock(WriterLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  WriterLock& operator=(WriterLock&& o) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  ~WriterLock() { release(); }
  void release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace gaugelab::io
