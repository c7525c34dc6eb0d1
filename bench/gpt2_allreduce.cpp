// Gradient averaging throughput of DataParallel: 2 Gloo ranks over loopback (this program started
// twice more as workers) against a local memcpy of the same bytes measured in the same run.
// What is timed is DataParallel::average_gradients on one fp32 tensor whose bucket holds it whole:
// the copy into the bucket, the presence-flags all-reduce, the all-reduce itself, the 1/world scale
// and the copy back — what the trainer pays per bucket.
// usage: gpt2_allreduce [--sizes-mib 1,8,32] [--reps 5]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include "gpt2/dist/data_parallel.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using gaugelab::gpt2::DataParallel;
using gaugelab::gpt2::DistBackend;
using gaugelab::gpt2::DistEnv;

constexpr double kTimeoutS = 120.0;  // a worker that cannot reach its peer fails instead of hanging

std::vector<double> parse_list(const std::string& s) {
  std::vector<double> v;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) v.push_back(std::stod(tok));
  return v;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Best-of-`reps` seconds of `f()`.
template <class F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

int worker(int rank, int port, const std::vector<double>& sizes_mib, int reps) {
  at::set_num_threads(1);
  DistEnv env;
  env.rank = rank;
  env.world = 2;
  env.local_rank = rank;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  env.source = "torchrun";
  const double max_mib = *std::max_element(sizes_mib.begin(), sizes_mib.end());
  auto dp = DataParallel::create(env, DistBackend::gloo, c10::Device(c10::kCPU), kTimeoutS,
                                 static_cast<std::int64_t>(max_mib * (1 << 20)) + 1);
  for (double mib : sizes_mib) {
    const auto n = static_cast<std::int64_t>(mib * (1 << 20) / 4);
    at::Tensor p = at::empty({n});
    p.mutable_grad() = at::ones({n});
    dp->average_gradients({p});  // warm-up: plans the bucket, first touch of the buffers
    dp->barrier();
    const double t = best_seconds(reps, [&] { dp->average_gradients({p}); });
    // Both ranks time; rank 0 reports the slower of the two (the step waits for it).
    const double other = 2.0 * dp->all_reduce_mean(t) - t;  // one collective on every rank
    const double slowest = std::max(t, other);
    if (rank == 0) std::printf("RESULT %g %.9g\n", mib, slowest);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes{1, 8, 32};
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--worker" && i + 3 < argc) {
      const int rank = std::atoi(argv[i + 1]), port = std::atoi(argv[i + 2]);
      sizes = parse_list(argv[i + 3]);
      if (i + 4 < argc) reps = std::atoi(argv[i + 4]);
      try {
        return worker(rank, port, sizes, reps);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gpt2_allreduce worker %d: %s\n", rank, e.what());
        return 1;
      }
    } else if (a == "--sizes-mib" && i + 1 < argc) {
      sizes = parse_list(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: gpt2_allreduce [--sizes-mib 1,8,32] [--reps 5]\n");
      return 2;
    }
  }
  std::string list;
  for (double s : sizes) list += (list.empty() ? "" : ",") + std::to_string(s);
  std::printf("gpt2_allreduce: DataParallel::average_gradients, 2 Gloo ranks over loopback (1 thread each) vs "
              "memcpy in one process; best of %d; load average %s (%ld cores, shared)\n",
              reps, loadavg().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);

  // Workers: rank 0's stdout comes back through a pipe, rank 1's is discarded.
  const int port = free_port();
  int fds[2];
  if (::pipe(fds) != 0) return 1;
  std::vector<pid_t> pids;
  const std::string reps_s = std::to_string(reps);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string rank_s = std::to_string(rank), port_s = std::to_string(port);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("GLOO_SOCKET_IFNAME", "lo", 1);
      ::setenv("OMP_NUM_THREADS", "1", 1);
      if (rank == 0) ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl("/proc/self/exe", argv[0], "--worker", rank_s.c_str(), port_s.c_str(), list.c_str(),
              reps_s.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t k; (k = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(k));
  ::close(fds[0]);
  int failed = 0;
  for (pid_t pid : pids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  if (failed) {
    std::fprintf(stderr, "gpt2_allreduce: %d worker(s) failed\n", failed);
    return 1;
  }

  at::set_num_threads(1);
  std::printf("%10s %14s %14s %14s %10s\n", "MiB", "allreduce ms", "allreduce GB/s", "memcpy GB/s", "ratio");
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    double mib = 0, t = 0;
    if (std::sscanf(line.c_str(), "RESULT %lf %lf", &mib, &t) != 2) continue;
    const auto n = static_cast<std::int64_t>(mib * (1 << 20) / 4);
    at::Tensor src = at::ones({n}), dst = at::empty({n});
    dst.copy_(src);
    const double tc = best_seconds(reps, [&] { dst.copy_(src); });
    const double bytes = static_cast<double>(n) * 4;
    std::printf("%10g %14.3f %14.3f %14.3f %10.1f\n", mib, t * 1e3, bytes / t / 1e9, bytes / tc / 1e9, t / tc);
  }
  std::printf("ratio = all-reduce time / memcpy time of the same bytes (lower is better; the all-reduce "
              "also copies into and out of its bucket). load average after: %s\n",
              loadavg().c_str());
  return 0;
}
