/* A full disk for one child process (LD_PRELOAD): once the bytes written to regular files reach
 * $GAUGELAB_ENOSPC_AFTER, every further write(2)-family call to a regular file fails with ENOSPC, as a
 * filling disk's would. Lets the fault tests meet ENOSPC itself (beside RLIMIT_FSIZE's EFBIG) without
 * root or a small filesystem. Not built into sanitizer builds (ASan must be the first preloaded library). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_llong written;

static long long limit(void) {
  static long long cached = -2;
  if (cached == -2) {
    const char* s = getenv("GAUGELAB_ENOSPC_AFTER");
    cached = s && *s ? atoll(s) : -1;
  }
  return cached;
}

/* 1 if this write of n bytes to fd must fail (the disk is "full"); counts it otherwise. */
static int full(int fd, size_t n) {
  struct stat st;
  if (limit() < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  if (atomic_load(&written) + (long long)n > limit()) {
    errno = ENOSPC;
    return 1;
  }
  atomic_fetch_add(&written, (long long)n);
  return 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void* buf, size_t n) {
  if (full(fd, n)) return -1;
  return NEXT(write)(fd, buf, n);
}
ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  if (full(fd, n)) return -1;
  return NEXT(pwrite)(fd, buf, n, off);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  if (full(fd, n)) return -1;
  return NEXT(pwrite64)(fd, buf, n, off);
}
ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  size_t n = 0;
  for (int i = 0; i < cnt; ++i) n += iov[i].iov_len;
  if (full(fd, n)) return -1;
  return NEXT(writev)(fd, iov, cnt);
}
