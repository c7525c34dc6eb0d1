// Multi-process harness of the data-parallel tests: the test executable re-executes itself
// (/proc/self/exe) running only the hidden test case "dist_worker", once per rank, with torchrun's
// variables in its environment and a scenario name; each worker writes its results to a text file
// the parent reads back. Every child is waited for with a deadline and SIGKILLed past it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace gaugelab::test::dist {

namespace fs = std::filesystem;

/// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it back, close).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("could not bind a port on 127.0.0.1");
  }
  const int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

/// A fresh scratch directory under the system temp dir, removed on destruction.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("gaugelab-dist-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

/// One worker process: rank `rank` of `world`, scenario, result file and log file.
struct Worker {
  pid_t pid = -1;
  int rank = 0;
  fs::path out;  // the worker's results
  fs::path log;  // its stdout + stderr
  int status = -1;
  bool finished = false;
  double seconds = 0;  // from spawn to exit
  std::chrono::steady_clock::time_point started;
};

/// Spawns this executable as rank `rank` of `world` for `scenario` (torchrun's variables, master
/// 127.0.0.1:port, Gloo bound to the loopback interface) plus `extra` variables.
inline Worker spawn_worker(const std::string& scenario, int rank, int world, int port, const fs::path& dir,
                           const std::map<std::string, std::string>& extra = {}) {
  Worker w;
  w.rank = rank;
  w.out = dir / ("rank" + std::to_string(rank) + ".out");
  w.log = dir / ("rank" + std::to_string(rank) + ".log");
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["RANK"] = std::to_string(rank);
  env["WORLD_SIZE"] = std::to_string(world);
  env["LOCAL_RANK"] = std::to_string(rank);
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(port);
  env["GLOO_SOCKET_IFNAME"] = "lo";
  env["OMP_NUM_THREADS"] = "1";
  env["GAUGELAB_DIST_SCENARIO"] = scenario;
  env["GAUGELAB_DIST_OUT"] = w.out.string();
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> kvs;
  for (const auto& [k, v] : env) kvs.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : kvs) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", name = "dist_worker";
  // Resolve our own path before fork: in the child /proc/self/exe would still be right, but the
  // argv[0] shown in ps/logs is clearer as the real path.
  const std::string self = fs::read_symlink(exe).string();
  std::vector<char*> argv{const_cast<char*>(self.c_str()), name.data(), nullptr};
  const std::string log = w.log.string();
  w.started = std::chrono::steady_clock::now();
  w.pid = ::fork();
  if (w.pid < 0) throw std::runtime_error("fork failed");
  if (w.pid == 0) {  // child: only async-signal-safe calls until execve
    // A parent that joined a group ignores SIGPIPE, and execve keeps an ignored signal: each worker starts with
    // the default, so that what it does with SIGPIPE is its own (the broken-pipe test needs the default).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGPIPE, &dfl, nullptr);
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    if (f) ::dup2(::fileno(stdout), 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return w;
}

/// Waits for every worker until `deadline_s` after the call; kills the ones still running then.
/// Returns true when all exited by themselves.
inline bool wait_all(std::vector<Worker>& ws, double deadline_s) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto limit = t0 + std::chrono::duration<double>(deadline_s);
  bool all = true;
  for (;;) {
    bool pending = false;
    for (auto& w : ws) {
      if (w.finished) continue;
      int st = 0;
      const pid_t r = ::waitpid(w.pid, &st, WNOHANG);
      if (r == w.pid) {
        w.finished = true;
        w.status = st;
        w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - w.started).count();
      } else {
        pending = true;
      }
    }
    if (!pending) return all;
    if (std::chrono::steady_clock::now() > limit) {
      for (auto& w : ws)
        if (!w.finished) {
          ::kill(w.pid, SIGKILL);
          int st = 0;
          ::waitpid(w.pid, &st, 0);
          w.finished = true;
          w.status = st;
          all = false;
        }
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The worker's result lines "key value value ..." as key -> values (hexfloat or decimal).
inline std::map<std::string, std::vector<double>> read_results(const fs::path& p) {
  std::map<std::string, std::vector<double>> r;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key, tok;
    ls >> key;
    if (key.empty() || key == "error") continue;
    auto& v = r[key];
    while (ls >> tok) v.push_back(std::strtod(tok.c_str(), nullptr));
  }
  return r;
}

/// The worker's "error <message>" line, or "" if it reported none.
inline std::string read_error(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("error ", 0) == 0) return line.substr(6);
  return "";
}

}  // namespace gaugelab::test::dist
