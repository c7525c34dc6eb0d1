// Running the front door as a child process under a time bound, optionally with a file size limit
// (RLIMIT_FSIZE: a write past it fails with EFBIG, as a full disk fails with ENOSPC, through the
// same system calls), for the fault tests: a failing or blocked child never hangs the test.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace gaugelab::test {

struct ChildResult {
  int status = -1;         // exit status; -1 if killed by a signal (crash) or by the time bound
  int signal = 0;          // the signal that ended it (0 if it exited)
  bool timed_out = false;  // still running at the bound, killed
  std::string output;      // stdout + stderr
  long max_rss_kb = 0;     // the child's peak resident memory (getrusage's ru_maxrss, KiB)
};

struct ChildOptions {
  double limit_s = 120;           // killed (SIGKILL) if still running after this long
  long long max_file_bytes = -1;  // RLIMIT_FSIZE for the child; -1 = unlimited
  long long enospc_after = -1;    // writes to regular files fail with ENOSPC past this many bytes (the
                                  // enospc shim, LD_PRELOAD); -1 = off. Needs GAUGELAB_ENOSPC_SHIM.
};

/// A command line split at single spaces into argv words (no quoting: the tests' lines need none).
inline std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t j = s.find(' ', i);
    if (j != i) w.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return w;
}

/// Runs argv[0] with arguments argv[1..] (no shell).
inline ChildResult run_child(const std::vector<std::string>& argv, const ChildOptions& opts = {}) {
  // Everything the child needs is built before fork(): tests run children from several threads, and
  // between fork and exec only async-signal-safe calls are allowed (no malloc, no setenv).
  std::vector<char*> a;
  for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (opts.enospc_after >= 0 && (v.rfind("LD_PRELOAD=", 0) == 0 || v.rfind("GAUGELAB_ENOSPC_AFTER=", 0) == 0)) continue;
    env_text.emplace_back(v);
  }
#ifdef GAUGELAB_ENOSPC_SHIM
  if (opts.enospc_after >= 0) {
    env_text.emplace_back(std::string("LD_PRELOAD=") + GAUGELAB_ENOSPC_SHIM);
    env_text.emplace_back("GAUGELAB_ENOSPC_AFTER=" + std::to_string(opts.enospc_after));
  }
#endif
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  int fds[2];
  ChildResult r;
  // O_CLOEXEC: a child started by another thread at the same moment must not inherit this pipe (it
  // would hold the write end open and delay this child's EOF until it exits).
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);  // dup2 clears O_CLOEXEC on 1 and 2
    dup2(fds[1], 2);
    if (opts.max_file_bytes >= 0) {
      signal(SIGXFSZ, SIG_IGN);  // kept across exec: writes past the limit fail with EFBIG instead
      const rlimit lim{static_cast<rlim_t>(opts.max_file_bytes), static_cast<rlim_t>(opts.max_file_bytes)};
      setrlimit(RLIMIT_FSIZE, &lim);
    }
    execve(a[0], a.data(), env.data());
    _exit(127);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opts.limit_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200))) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child (and anything it started) closed the pipe
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  rusage ru{};
  while (!r.timed_out && wait4(pid, &st, WNOHANG, &ru) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (r.timed_out) wait4(pid, &st, 0, &ru);
  r.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(st) && !r.timed_out) r.status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

}  // namespace gaugelab::test
