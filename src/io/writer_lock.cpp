#include "io/writer_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace gaugelab::io {

namespace {

// The locked byte: far beyond any file this project writes, so HDF5 never reads or writes it.
constexpr off_t kLockOffset = off_t{1} << 60;

}  // namespace

WriterLock WriterLock::acquire(const std::string& path) {
  WriterLock lock;
  lock.fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (lock.fd_ < 0)
    throw std::runtime_error("run log '" + path + "': cannot open for writing: " + std::strerror(errno));
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = kLockOffset;
  fl.l_len = 1;
  if (fcntl(lock.fd_, F_OFD_SETLK, &fl) == 0) return lock;
  const int err = errno;
  lock.release();
  if (err == EAGAIN || err == EACCES)
    throw std::runtime_error("run log '" + path + "': is being written by another process");
  return lock;  // locks unsupported here (EINVAL, ENOLCK): proceed unprotected
}

WriterLock WriterLock::acquire_dir(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory '" + dir + "': " + ec.message());
  WriterLock lock;
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

WriterLock& WriterLock::operator=(WriterLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

void WriterLock::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace gaugelab::io
