#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace gaugelab::io {

namespace {

/// Every byte of `data` to `fd`, retrying short writes and EINTR; false with errno set on failure.
bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void write_failed(const std::string& what, int err) {
  throw std::runtime_error(what + ": write failed (" + std::strerror(err) + ")");
}

}  // namespace

void write_atomically(const std::string& path, const void* data, std::size_t size, const std::string& what) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(what + ": cannot create (" + std::strerror(errno) + ")");
  const bool wrote = write_all(fd, data, size);
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (!wrote || !closed) {
    const int reported = wrote ? errno : err;
    ::unlink(tmp.c_str());  // ours and incomplete; the file at `path`, if any, is untouched
    write_failed(what, reported);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(what + ": cannot rename into place: " + ec.message());
}

void append_text(const std::string& path, const std::string& text, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(what + ": cannot open for appending (" + std::strerror(errno) + ")");
  const bool wrote = write_all(fd, text.data(), text.size());
  const int err = errno;
  const bool closed = ::close(fd) == 0;
  if (!wrote || !closed) write_failed(what, wrote ? errno : err);
}

void replace_file(const std::string& path, const std::string& suffix, const std::function<void(const std::string&)>& write,
                  const std::string& what) {
  const std::string tmp = path + suffix;
  try {
    write(tmp);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);  // ours and incomplete
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(what + ": cannot replace '" + path + "' by its new version: " + ec.message());
}

}  // namespace gaugelab::io
