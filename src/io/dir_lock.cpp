#include "io/dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace gaugelab::io {

DirLock DirLock::acquire(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory '" + dir + "': " + ec.message());
  DirLock lock;
  lock.fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock.fd_ < 0) throw std::runtime_error("'" + dir + "': cannot open the directory: " + std::strerror(errno));
  if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) return lock;
  const int err = errno;
  lock.release();
  if (err == EWOULDBLOCK)
    throw std::runtime_error("'" + dir + "': is being written by another gaugelab process (" + what +
                             "); wait for it to end or choose another --out");
  return lock;  // flock unsupported here (ENOLCK, EINVAL): proceed unprotected
}

DirLock& DirLock::operator=(DirLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void DirLock::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace gaugelab::io
