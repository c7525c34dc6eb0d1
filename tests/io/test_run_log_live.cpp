// Live logs: a reader in another process follows a log while it is written; close() still writes
// /summary while that reader holds the file open; buffered rows are flushed even when appends
// pause; a second writer is kept off a log that is being written.
#include <catch2/catch.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::io;
using gaugelab::test::TempDir;

namespace {

constexpr int kWaitMs = 20000;  // bound on every wait for the other process (each step takes ms)

// Waits (bounded) for one byte on `fd`; returns it, or 0 on timeout/EOF.
char await_byte(int fd) {
  pollfd p{fd, POLLIN, 0};
  char c = 0;
  if (poll(&p, 1, kWaitMs) == 1 && read(fd, &c, 1) == 1) return c;
  return 0;
}

void send_byte(int fd, char c) {
  if (write(fd, &c, 1) != 1) _exit(4);
}

// The reader process: opens the log once told it is live, says so, and after the writer closed
// checks that its old reader still works and a new one sees the summary. Exit 0 = all good.
[[noreturn]] void reader_child(const std::string& path, int in, int out) {
  try {
    if (await_byte(in) != 's') _exit(10);
    RunLogReader live(path);
    if (live.series_length() != 3) _exit(11);
    send_byte(out, 'o');
    if (await_byte(in) != 'c') _exit(12);
    if (live.series_length() != 5) _exit(13);  // the rows appended after it opened are seen
    const auto sum = RunLogReader(path).summary();
    _exit(sum.count("final") && std::get<double>(sum.at("final")) == 1.5 ? 0 : 14);
  } catch (...) {
    _exit(15);
  }
}

}  // namespace

TEST_CASE("run log: close() writes the summary while a SWMR reader holds the file", "[io][run_log][live]") {
  TempDir dir;
  const std::string path = dir.file("live.h5");
  int to_child[2], to_parent[2];
  REQUIRE(pipe(to_child) == 0);
  REQUIRE(pipe(to_parent) == 0);
  const pid_t pid = fork();  // before this test opens any HDF5 file: the child inherits none
  REQUIRE(pid >= 0);
  if (pid == 0) reader_child(path, to_child[0], to_parent[1]);

  RunLog log = RunLog::create(path, Provenance{"test/live", {"test_io"}, nlohmann::json::object(), 1, 1}, false);
  log.declare_series({"loss"});
  log.start();
  for (std::int64_t i = 0; i < 3; ++i) log.append_series(i, {1.0 * static_cast<double>(i)});
  log.flush();
  send_byte(to_child[1], 's');
  const char opened = await_byte(to_parent[0]);
  for (std::int64_t i = 3; i < 5; ++i) log.append_series(i, {1.0 * static_cast<double>(i)});
  log.set_summary("final", 1.5);
  REQUIRE_NOTHROW(log.close());
  send_byte(to_child[1], 'c');
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) ::close(fd);
  CHECK(opened == 'o');
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::get<double>(RunLogReader(path).summary().at("final")) == 1.5);
}

TEST_CASE("run log: a row appended before a pause is flushed by the background flusher", "[io][run_log][live]") {
  constexpr auto kWaitLimit = std::chrono::seconds(10);  // the flusher acts within ~flush_interval_s
  TempDir dir;
  const std::string path = dir.file("pause.h5");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      RunLog::Options opts;
      opts.flush_interval_s = 0.05;
      RunLog log = RunLog::create(path, Provenance{"test/pause", {"test_io"}, nlohmann::json::object(), 1, 1},
                                  false, opts);
      log.declare_series({"loss"});
      log.start();
      log.append_series(0, {0.5});  // just after start's flush: buffered, no later append
      std::this_thread::sleep_for(std::chrono::seconds(30));  // killed long before this ends
    } catch (...) {
    }
    _exit(3);
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t rows = 0;
  while (rows == 0 && std::chrono::steady_clock::now() - t0 < kWaitLimit) {
    try {
      rows = RunLogReader(path).series_length();
    } catch (const std::runtime_error&) {
    }
    if (rows == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));  // it was still pausing, not finished
  REQUIRE(rows == 1);
  CHECK(RunLogReader(path).series().at("loss") == std::vector<double>{0.5});
}

TEST_CASE("run log: a second writer on a live log is refused", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("busy.h5");
  const Provenance prov{"test/busy", {"test_io"}, nlohmann::json::object(), 1, 1};
  RunLog log = RunLog::create(path, prov, false);
  log.declare_series({"loss"});
  log.start();
  log.append_series(0, {1.0});
  CHECK_THROWS_WITH(RunLog::open_append(path), Catch::Contains(path) && Catch::Contains("being written"));
  CHECK_THROWS_WITH(RunLog::create(path, prov, true), Catch::Contains("being written"));
  log.close();
  RunLog again = RunLog::open_append(path);  // the lock ends with the writer
  CHECK(again.series_rows() == 1);
}

}  // namespace GAUGELAB_TU
