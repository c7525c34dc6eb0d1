// Resume: a sweep killed with SIGKILL and rerun with the same command loses no finished row, redoes
// none and ends equal to the uninterrupted sweep; leftovers of a kill mid-flush are dropped.
#include "test_sweep_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "io/run_log.hpp"

extern char** environ;

using namespace gaugelab;

namespace {

// Enough work for several seconds on one thread (64 rows of 40000 steps), flushed every 0.2 s: with
// 4000 steps the whole sweep took ~0.6 s and sometimes ended before the poller saw its first rows. The
// sanitizer build (-O1, ASan+UBSan) is ~10x slower: 16 rows of 4000 steps there (64 took 5.7 min).
#ifdef GAUGELAB_SANITIZED
constexpr const char* kLongSteps = "4000";
constexpr const char* kLongSeeds = "4";
constexpr std::int64_t kLongRows = 16;
#else
constexpr const char* kLongSteps = "40000";
constexpr const char* kLongSeeds = "16";
constexpr std::int64_t kLongRows = 64;
#endif
std::vector<std::string> long_sweep_args() {
  return {"--lr", "5e-3,1e-2", "--lambda", "0,0.2", "--seeds", kLongSeeds, "--steps", kLongSteps, "--flush-s", "0.2"};
}
constexpr std::int64_t kKillAfterRows = 3;              // kill once this many rows are flushed
constexpr auto kPollEvery = std::chrono::milliseconds(20);
constexpr auto kPollLimit = std::chrono::seconds(120);  // a loaded machine is slow; never wait forever

pid_t spawn_sweep(const std::string& out) {
  std::vector<std::string> args = {GAUGELAB_BINARY_DIR "/gaugelab", "sweep", "relu"};
  for (const auto& a : long_sweep_args()) args.push_back(a);
  args.insert(args.end(), {"--threads", "1", "--progress-s", "1000", "--out", out});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  return pid;
}

int wait_exit(pid_t pid) {
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Rows in /tables/runs as a reader sees them now (0 while the file is not readable yet).
std::uint64_t flushed_rows(const std::string& path) {
  try {
    const io::RunLogReader r(path);
    return r.has_table("runs") ? r.table("runs").rows : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

TEST_CASE("resume after SIGKILL: the rerun finishes the missing rows, loses and redoes none", "[toys][sweep][resume]") {
  test::TempDir dir;
  const std::string killed = dir.file("killed.h5"), whole = dir.file("whole.h5");

  const pid_t pid = spawn_sweep(killed);
  const auto t0 = std::chrono::steady_clock::now();
  bool exited = false;
  while (flushed_rows(killed) < static_cast<std::uint64_t>(kKillAfterRows)) {
    REQUIRE(std::chrono::steady_clock::now() - t0 < kPollLimit);
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  REQUIRE_FALSE(exited);  // it must still be running when killed, or the test shows nothing
  REQUIRE(kill(pid, SIGKILL) == 0);
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  REQUIRE(WIFSIGNALED(st));

  const auto before = test::contents_of(killed);
  const auto done = static_cast<std::int64_t>(before.records.size());
  INFO("rows finished before the kill: " << done);
  REQUIRE(done >= kKillAfterRows);
  REQUIRE(done < kLongRows);

  // The same command again.
  const pid_t again = spawn_sweep(killed);
  REQUIRE(wait_exit(again) == 0);

  const auto after = test::contents_of(killed);  // read_sweep throws on a row present twice
  CHECK(after.records.size() == static_cast<std::size_t>(kLongRows));
  CHECK(after.orphan_rows == 0);
  CHECK(test::summary_int(killed, "rows_skipped") == done);
  CHECK(test::summary_int(killed, "rows_run") == kLongRows - done);
  for (const auto& [row, rec] : before.records) {
    INFO("row finished before the kill: " << row);
    REQUIRE(after.records.count(row) == 1);
    CHECK(test::same_rows({rec.runs}, {after.records.at(row).runs}));
    CHECK(test::same_rows(rec.series, after.records.at(row).series));
  }
  test::run_sweep_to(whole, long_sweep_args(), 2);
  test::check_same_records(test::contents_of(whole), after);
  CHECK(test::same_rows(test::table_rows(whole, "points"), test::table_rows(killed, "points")));
}

TEST_CASE("resume: rows of runs cut off by a kill mid-flush are dropped, then redone once", "[toys][sweep][resume]") {
  test::TempDir dir;
  const std::string whole = dir.file("whole.h5"), partial = dir.file("partial.h5");
  test::run_sweep_to(whole, test::small_sweep_args(), 2);
  const auto full = test::contents_of(whole);

  // A log as a kill could leave it: rows 0-4 complete, row 5's series and arrays without its runs row.
  {
    toys::SweepSettings s;
    auto args = test::small_sweep_args();
    const auto plan = test::plan_of(args, s);
    io::Provenance prov{"sweep/relu", {"test"}, plan.config(), 0, 1};
    auto log = io::RunLog::create(partial, prov, false);
    toys::declare_sweep_tables(log, full);
    log.start();
    for (std::int64_t row = 0; row < 5; ++row) toys::append_sweep_record(log, full.records.at(row));
    for (const auto& r : full.records.at(5).arrays) log.append_row("run_arrays", r);
    for (const auto& r : full.records.at(5).series) log.append_row("run_series", r);
    log.close();
  }
  const auto cut = test::contents_of(partial);
  CHECK(cut.records.size() == 5);
  CHECK(cut.orphan_rows > 0);

  const auto res = test::run_sweep_to(partial, test::small_sweep_args(), 2);
  CHECK(res.rows_skipped == 5);
  CHECK(res.rows_run == 7);
  const auto after = test::contents_of(partial);
  CHECK(after.orphan_rows == 0);
  test::check_same_records(full, after);  // row 5's series appear once, not twice
  CHECK(test::same_rows(test::table_rows(whole, "points"), test::table_rows(partial, "points")));
}
