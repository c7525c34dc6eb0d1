// Durability and resume: a writer killed with SIGKILL leaves a readable log with every flushed
// row, and open_append continues a log (closed cleanly or killed) without losing or shifting rows.
#include <catch2/catch.hpp>
#include <hdf5.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::io;
using gaugelab::test::TempDir;

namespace {

// The values written at step i: distinct per step and per series, exactly representable.
double loss_at(std::int64_t i) { return 1.0 / static_cast<double>(i + 1); }
double norm_at(std::int64_t i) { return static_cast<double>(i) * 0.5 - 3.0; }

Provenance provenance() {
  Provenance p;
  p.kind = "test/kill";
  p.argv = {"test_io"};
  p.config = nlohmann::json::object();
  return p;
}

// The child: logs rows as fast as it can, flushing often, and never closes the file.
[[noreturn]] void writer_child(const std::string& path) {
  constexpr std::int64_t kMaxRows = 1'000'000;                 // bound on the loop's count
  constexpr auto kMaxTime = std::chrono::seconds(5);           // bound on the loop's time
  try {
    RunLog::Options opts;
    opts.flush_interval_s = 0.005;  // automatic flushes every 5 ms, besides the explicit ones below
    RunLog log = RunLog::create(path, provenance(), false, opts);
    log.declare_series({"loss", "grad_norm"});
    log.declare_table("events", {{"step", DType::i64}, {"tag", DType::str, 16}});
    log.start();
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < kMaxRows && std::chrono::steady_clock::now() - t0 < kMaxTime; ++i) {
      log.append_series(i, {loss_at(i), norm_at(i)});
      if (i % 10 == 0) log.append_row("events", {Cell(i), Cell("row" + std::to_string(i))});
      if (i % 100 == 99) log.flush();
    }
    // Out of rows before the parent struck: wait to be killed, still without closing (bounded).
    std::this_thread::sleep_for(std::chrono::seconds(30));
    _exit(0);
  } catch (...) {
    _exit(3);
  }
}

// Rows of /series visible to a SWMR reader right now (0 if the file cannot be opened yet).
std::uint64_t visible_rows(const std::string& path) {
  try {
    return RunLogReader(path).series_length();
  } catch (const std::runtime_error&) {
    return 0;
  }
}

void check_series(const RunLogReader& r, std::uint64_t n) {
  const SeriesData s = r.series();
  REQUIRE(s.step.size() == n);
  REQUIRE(s.at("loss").size() == n);
  REQUIRE(s.at("grad_norm").size() == n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto step = static_cast<std::int64_t>(i);
    if (s.step[i] != step || s.at("loss")[i] != loss_at(step) || s.at("grad_norm")[i] != norm_at(step)) {
      FAIL("row " << i << " holds step " << s.step[i] << ", loss " << s.at("loss")[i]);
    }
  }
}

}  // namespace

TEST_CASE("run log: SIGKILL leaves a readable log with every flushed row", "[io][run_log][kill]") {
  constexpr std::uint64_t kMinRows = 2000;              // rows the parent waits to see before killing
  constexpr auto kWaitLimit = std::chrono::seconds(20);  // the child needs well under a second here
  TempDir dir;
  const std::string path = dir.file("killed.h5");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) writer_child(path);

  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t seen = 0;
  while ((seen = visible_rows(path)) < kMinRows && std::chrono::steady_clock::now() - t0 < kWaitLimit)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(seen >= kMinRows);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  std::uint64_t n = 0;
  {
    RunLogReader r(path);
    n = r.series_length();
    CHECK(n >= seen);  // nothing a reader saw before the kill is lost
    check_series(r, n);
    const TableData t = r.table("events");
    REQUIRE(t.rows >= 1);
    for (std::uint64_t j = 0; j < t.rows; ++j) {
      CHECK(t.i64("step")[j] == static_cast<std::int64_t>(10 * j));
      CHECK(t.str("tag")[j] == "row" + std::to_string(10 * j));
    }
    CHECK(r.summary().empty());  // a killed run has no summary
  }

  // open_append repairs the killed log and continues it.
  {
    constexpr std::uint64_t kMore = 100;
    {
      RunLog log = RunLog::open_append(path);
      CHECK(log.series_names() == std::vector<std::string>{"loss", "grad_norm"});
      const std::uint64_t have = log.series_rows();
      CHECK(have == n);
      log.declare_series({"loss", "grad_norm"});
      log.start();
      for (std::uint64_t i = have; i < have + kMore; ++i)
        log.append_series(static_cast<std::int64_t>(i), {loss_at(static_cast<std::int64_t>(i)),
                                                         norm_at(static_cast<std::int64_t>(i))});
      log.set_summary("resumed_from", static_cast<std::int64_t>(have));
    }
    RunLogReader r(path);
    check_series(r, n + kMore);
    CHECK(std::get<std::int64_t>(r.summary().at("resumed_from")) == static_cast<std::int64_t>(n));
  }
}

TEST_CASE("run log: open_append resumes a closed log, keeping rows and summary", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("resume.h5");
  const std::vector<Column> cols{{"lr", DType::f64}, {"seed", DType::i64}, {"status", DType::str, 12}};
  {
    RunLog log = RunLog::create(path, provenance(), false);
    log.declare_series({"loss", "grad_norm"});
    log.declare_table("runs", cols);
    log.start();
    for (std::int64_t i = 0; i < 5; ++i) log.append_series(i, {loss_at(i), norm_at(i)});
    for (std::int64_t i = 0; i < 3; ++i) log.append_row("runs", {Cell(0.5 * i), Cell(i), Cell("done")});
    log.set_summary("first", std::int64_t{1});
  }
  {
    RunLog log = RunLog::open_append(path);
    CHECK(log.table_names() == std::vector<std::string>{"runs"});
    CHECK(log.table_rows("runs") == 3);
    CHECK(log.series_rows() == 5);
    const auto have = log.table_columns("runs");
    REQUIRE(have.size() == 3);
    CHECK(have[2].width == 12);
    log.declare_table("runs", cols);  // the same declaration again: no-op
    CHECK_THROWS_WITH(log.declare_table("runs", {{"lr", DType::f64}}), Catch::Contains("different columns"));
    CHECK_THROWS_WITH(log.declare_series({"new"}), Catch::Contains("already has 5 rows"));
    log.declare_table("extra", {{"x", DType::f64}});  // new objects may still be added before start()
    log.start();
    for (std::int64_t i = 5; i < 10; ++i) log.append_series(i, {loss_at(i), norm_at(i)});
    log.append_row("runs", {Cell(9.0), Cell(std::int64_t{9}), Cell("resumed")});
    log.append_row("extra", {Cell(1.5)});
    log.set_summary("second", std::int64_t{2});
  }
  RunLogReader r(path);
  check_series(r, 10);
  const TableData t = r.table("runs");
  CHECK(t.f64("lr") == std::vector<double>{0.0, 0.5, 1.0, 9.0});
  CHECK(t.i64("seed") == std::vector<std::int64_t>{0, 1, 2, 9});
  CHECK(t.str("status") == std::vector<std::string>{"done", "done", "done", "resumed"});
  CHECK(r.table("extra").f64("x") == std::vector<double>{1.5});
  const auto sum = r.summary();
  CHECK(std::get<std::int64_t>(sum.at("first")) == 1);
  CHECK(std::get<std::int64_t>(sum.at("second")) == 2);
  CHECK(r.root().kind == "test/kill");  // provenance of the original run is kept
}

TEST_CASE("run log: a writer killed while adding /summary leaves a log that reads and resumes", "[io][run_log][kill]") {
  // RunLog::close() reopens a SWMR log in ordinary mode to add /summary; a SIGKILL then leaves the
  // superblock marked "open for write" (not SWMR), which both a SWMR read open and a plain one refuse.
  TempDir dir;
  const std::string path = dir.file("summary_killed.h5");
  {
    RunLog log = RunLog::create(path, provenance(), false);
    log.declare_series({"loss", "grad_norm"});
    log.start();
    for (std::int64_t i = 0; i < 5; ++i) log.append_series(i, {loss_at(i), norm_at(i)});
  }  // closed cleanly, without a summary
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The open marks the superblock on disk. A dataset flushed alone then puts metadata past the end of
    // file the superblock records, as a cache flush during close() can; _exit skips HDF5's atexit close.
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
    const hid_t d = f < 0 ? -1 : H5Dopen2(f, "/commit", H5P_DEFAULT);
    bool ok = d >= 0;
    const hid_t scalar = H5Screate(H5S_SCALAR);
    for (int i = 0; ok && i < 40; ++i) {  // attributes move to dense storage, allocated past the EOA
      const std::string name = "padding_" + std::to_string(i);
      const hid_t a = H5Acreate2(d, name.c_str(), H5T_NATIVE_DOUBLE, scalar, H5P_DEFAULT, H5P_DEFAULT);
      const double v = i;
      ok = a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0 && H5Aclose(a) >= 0;
    }
    _exit(ok && H5Dflush(d) >= 0 ? 0 : 3);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  {  // the mark is there: HDF5 alone refuses the file; ignoring it, the flushed dataset lies past the EOA
    H5E_BEGIN_TRY {
      CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
      const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
      hbool_t clear = true;
      H5Pset(fapl, "clear_status_flags", &clear);
      const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
      REQUIRE(f >= 0);
      const hid_t d = H5Dopen2(f, "/commit", H5P_DEFAULT);
      REQUIRE(d >= 0);
      const hid_t a = H5Aopen(d, "groups", H5P_DEFAULT);
      CHECK(a < 0);  // its attributes now lie past the recorded end of file
      if (a >= 0) H5Aclose(a);
      H5Dclose(d);
      H5Fclose(f);
      H5Pclose(fapl);
    }
    H5E_END_TRY;
  }
  {
    const RunLogReader r(path);
    check_series(r, 5);
    CHECK(r.summary().empty());
  }
  {
    RunLog log = RunLog::open_append(path);
    CHECK(log.series_rows() == 5);
    log.start();
    for (std::int64_t i = 5; i < 8; ++i) log.append_series(i, {loss_at(i), norm_at(i)});
    log.set_summary("resumed_from", std::int64_t{5});
  }
  const RunLogReader r(path);
  check_series(r, 8);
  CHECK(std::get<std::int64_t>(r.summary().at("resumed_from")) == 5);
}

namespace {

namespace fs = std::filesystem;

// The staging files (PATH.creating-PID) beside `path`.
std::vector<std::string> staging_files(const std::string& path) {
  std::vector<std::string> out;
  const std::string prefix = fs::path(path).filename().string() + ".creating-";
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  return out;
}

// A child that creates a log at `path` (forced or not) and dies before start(), as a SIGKILL there would.
void creator_dies_before_start(const std::string& path, bool force) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      RunLog log = RunLog::create(path, provenance(), force);
      log.declare_series({"loss", "grad_norm"});
      _exit(0);  // no destructor, no close: what a kill leaves
    } catch (...) {
      _exit(3);
    }
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

}  // namespace

TEST_CASE("run log: a writer killed while creating leaves nothing at the path, and --force keeps the old log",
          "[io][run_log][kill]") {
  TempDir dir;
  const std::string path = dir.file("created.h5");
  creator_dies_before_start(path, false);
  CHECK_FALSE(fs::exists(path));  // nothing a rerun would refuse as damaged
  CHECK(staging_files(path).size() == 1);
  {  // the rerun creates the log and removes the dead creator's file
    RunLog log = RunLog::create(path, provenance(), false);
    log.declare_series({"loss", "grad_norm"});
    log.start();
    CHECK(fs::exists(path));  // published by start(): live readers find it
    CHECK(staging_files(path).empty());
    for (std::int64_t i = 0; i < 4; ++i) log.append_series(i, {loss_at(i), norm_at(i)});
  }
  check_series(RunLogReader(path), 4);

  creator_dies_before_start(path, true);  // --force over it, killed before its start()
  check_series(RunLogReader(path), 4);    // the old log is whole until the new one starts
  CHECK(staging_files(path).size() == 1);
  {
    RunLog log = RunLog::create(path, provenance(), true);
    log.declare_series({"loss", "grad_norm"});
    check_series(RunLogReader(path), 4);  // still the old one before start()
    log.start();
    CHECK(RunLogReader(path).series_length() == 0);
  }
  CHECK(staging_files(path).empty());
}

TEST_CASE("run log: a creator still running keeps its file, a log that appears at the path is not replaced",
          "[io][run_log][kill]") {
  TempDir dir;
  const std::string path = dir.file("contended.h5");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // creates and waits to be killed, never starting (bounded)
    try {
      RunLog log = RunLog::create(path, provenance(), false);
      std::this_thread::sleep_for(std::chrono::seconds(30));
    } catch (...) {
    }
    _exit(3);
  }
  const auto t0 = std::chrono::steady_clock::now();
  while (staging_files(path).empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(staging_files(path).size() == 1);
  const std::string theirs = staging_files(path).front();
  {
    RunLog log = RunLog::create(path, provenance(), false);  // another creator: its own file
    CHECK(fs::exists(theirs));                                 // the live one's is left alone
    std::ofstream(path) << "made meanwhile\n";                // something else takes the path
    std::string ours;
    for (const auto& f : staging_files(path))
      if (f != theirs) ours = f;
    REQUIRE_FALSE(ours.empty());
    log.set_summary("kept", std::int64_t{1});
    std::string msg;
    try {
      log.start();
    } catch (const std::runtime_error& e) {
      msg = e.what();
    }
    CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("appeared") && Catch::Contains(ours));
    CHECK(fs::exists(ours));  // this run's log is kept where the message says
    log.close();              // no second error: the refusal was said once
    CHECK(std::get<std::int64_t>(RunLogReader(ours).summary().at("kept")) == 1);  // and closed there
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "made meanwhile");  // not replaced
  kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
}

namespace {

// One life of a run at `path`: created (or resumed, if there), 200 rows, 300 summary values, closed.
[[noreturn]] void short_run(const std::string& path) {
  try {
    RunLog log = fs::exists(path) ? RunLog::open_append(path) : RunLog::create(path, provenance(), false);
    log.declare_series({"loss", "grad_norm"});
    log.start();
    const auto from = static_cast<std::int64_t>(log.series_rows());
    for (std::int64_t i = from; i < from + 200; ++i) {
      log.append_series(i, {loss_at(i), norm_at(i)});
      if (i % 50 == 49) log.flush();
    }
    for (int k = 0; k < 300; ++k) log.set_summary("value_" + std::to_string(k), std::int64_t{k});
    log.close();
    _exit(0);
  } catch (...) {
    _exit(3);
  }
}

// Runs short_run in a child, SIGKILLed after `after` (never, if negative); its exit status or -signal.
int run_child(const std::string& path, std::chrono::microseconds after) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) short_run(path);
  if (after.count() >= 0) {
    std::this_thread::sleep_for(after);
    kill(pid, SIGKILL);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// HDF5's own opens: as a SWMR reader (a log killed while SWMR) or plainly (one closed cleanly).
bool opens_as_hdf5_wrote_it(const std::string& path) {
  hid_t f = -1;
  H5E_BEGIN_TRY {
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    f = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
    if (f < 0) f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
  }
  H5E_END_TRY;
  if (f >= 0) H5Fclose(f);
  return f >= 0;
}

}  // namespace

TEST_CASE("run log: a run killed at any moment leaves its path absent or a log HDF5 opens, which resumes",
          "[io][run_log][kill]") {
  constexpr int kKills = 40;                                   // bounded in count
  constexpr auto kLimit = std::chrono::seconds(60);            // and in time
  TempDir dir;
  const std::string path = dir.file("any_moment.h5");
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_child(path, std::chrono::microseconds(-1)) == 0);  // one whole life, timed
  const auto life = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  fs::remove(path);
  std::uint64_t seed = 12345;
  int killed = 0;
  for (int k = 0; k < kKills && std::chrono::steady_clock::now() - t0 < kLimit; ++k) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto at = std::chrono::microseconds(static_cast<std::int64_t>((seed >> 33) % static_cast<std::uint64_t>(life.count() + 1)));
    const int status = run_child(path, at);
    INFO("kill " << k << " at " << at.count() << " us of a " << life.count() << " us life: status " << status);
    REQUIRE((status == 0 || status == -SIGKILL));
    killed += status == -SIGKILL;
    if (!fs::exists(path)) continue;  // killed before the first start(): nothing at the path
    REQUIRE(opens_as_hdf5_wrote_it(path));
    const RunLogReader r(path);
    const SeriesData s = r.series();
    std::size_t in_order = 0;
    while (in_order < s.step.size() && s.step[in_order] == static_cast<std::int64_t>(in_order)) ++in_order;
    REQUIRE(in_order == s.step.size());  // steps 0, 1, 2, ...: no row lost, doubled or shifted
  }
  CHECK(killed > 0);
  REQUIRE(run_child(path, std::chrono::microseconds(-1)) == 0);  // and the last life completes it
  const RunLogReader r(path);
  check_series(r, r.series_length());
  CHECK(r.series_length() >= 200);
  CHECK(std::get<std::int64_t>(r.summary().at("value_299")) == 299);
  CHECK(staging_files(path).empty());
}

namespace {

// Grows a closed log's datasets by `extra` rows of fill values (zeros) behind /commit's back: what a
// flush that failed part-way leaves when HDF5 wrote the new extents but not the rows.
void grow_behind_commit(const std::string& path, const std::vector<std::string>& datasets, hsize_t extra) {
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  for (const auto& where : datasets) {
    const hid_t d = H5Dopen2(f, where.c_str(), H5P_DEFAULT);
    REQUIRE(d >= 0);
    const hid_t space = H5Dget_space(d);
    hsize_t dims[4] = {0, 0, 0, 0};
    const int rank = H5Sget_simple_extent_ndims(space);
    REQUIRE((rank >= 1 && rank <= 4));
    REQUIRE(H5Sget_simple_extent_dims(space, dims, nullptr) == rank);
    H5Sclose(space);
    dims[0] += extra;
    REQUIRE(H5Dset_extent(d, dims) >= 0);
    H5Dclose(d);
  }
  H5Fclose(f);
}

// Steps [from, to): a series row, an "events" row and a "traj" row each.
void append_steps(RunLog& log, std::int64_t from, std::int64_t to) {
  for (std::int64_t i = from; i < to; ++i) {
    log.append_series(i, {loss_at(i), norm_at(i)});
    log.append_row("events", {Cell(i), Cell("row" + std::to_string(i))});
    const double traj[2] = {loss_at(i), norm_at(i)};
    log.append_array_rows("traj", traj, 1);
  }
}

}  // namespace

TEST_CASE("run log: rows past /commit are neither read nor kept by a resume", "[io][run_log]") {
  TempDir dir;
  const std::string path = dir.file("log.h5");
  {
    RunLog log = RunLog::create(path, provenance(), false);
    log.declare_series({"loss", "grad_norm"});
    log.declare_table("events", {{"step", DType::i64}, {"tag", DType::str, 16}});
    log.declare_rows_array("traj", {2}, DType::f64);
    log.start();
    append_steps(log, 0, 5);
    log.close();
  }
  grow_behind_commit(path, {"/series/step", "/series/loss", "/series/grad_norm", "/tables/events/step",
                            "/tables/events/tag", "/arrays/traj"}, 3);
  {
    const RunLogReader r(path);
    check_series(r, 5);
    CHECK(r.table("events").rows == 5);
    CHECK(r.array("traj").shape == std::vector<std::uint64_t>{5, 2});
  }
  {  // a resume continues at row 5, over the unconfirmed rows, and counts its own
    RunLog log = RunLog::open_append(path);
    log.start();
    append_steps(log, 5, 7);
    log.close();
  }
  const RunLogReader r(path);
  check_series(r, 7);
  const TableData t = r.table("events");
  REQUIRE(t.rows == 7);
  for (std::int64_t i = 0; i < 7; ++i) CHECK(t.i64("step")[static_cast<std::size_t>(i)] == i);
  const auto traj = r.array("traj");
  REQUIRE(traj.shape == std::vector<std::uint64_t>{7, 2});
  for (std::size_t i = 0; i < 7; ++i) CHECK(traj.values[2 * i] == loss_at(static_cast<std::int64_t>(i)));
}

}  // namespace GAUGELAB_TU
