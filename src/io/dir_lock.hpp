// Marks an output directory (a training run, a prepared corpus) as having a live writer, so a
// second gaugelab process writing there (a second `train --resume`, `train --force` over a live run,
// a second `prepare`) is refused before it touches anything.
//
// The lock is flock(2) on the directory itself: no file is added to the directory, the kernel
// drops it when the writer exits or is killed (never stale), and a child process does not inherit
// it (the descriptor is close-on-exec). On file systems without flock it degrades to no protection.
#pragma once

#include <string>

namespace gaugelab::io {

class DirLock {
 public:
  DirLock() = default;
  /// Creates `dir` (and its parents) if missing and locks it; throws std::runtime_error("'dir': is
  /// being written by another gaugelab process (WHAT)") if another process holds the lock.
  /// `what` names the verb for the message, e.g. "a training run".
  static DirLock acquire(const std::string& dir, const std::string& what);
  DirLock(DirLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirLock& operator=(DirLock&& o) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock() { release(); }
  void release();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace gaugelab::io
