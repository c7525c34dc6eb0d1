// `gaugelab train` under faults: a second writer on a live run directory is refused before it
// touches anything; --resume never hangs on a damaged log and never renames it before reading it;
// a damaged newest checkpoint falls back to the one before; an empty log and a run that failed
// before its first step do not block the next run. Every child runs under a time bound.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gpt2/train/run_dir.hpp"
#include "io/writer_lock.hpp"
#include "io/run_log_reader.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "tests/support/child.hpp"
#include "tests/support/own_dir.hpp"
#include "tests/support/process.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_faults";

const std::string& data_dir() {
  static const test::OwnDir own(kRoot + "/data");
  static const std::string dir = [] {
    const std::string d = own.path;
    const auto r = test::run_child({kBin, "prepare", "--synthetic", "--docs", "300", "--seed", "1", "--force", "--out", d});
    if (r.status != 0) throw std::runtime_error("prepare failed: " + r.output);
    return d;
  }();
  return dir;
}

// A nano run of `iters` steps with a checkpoint every 10, plus `extra` flags.
std::vector<std::string> train_cmd(const std::string& out, int iters, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a = {kBin, "train", "--data", data_dir(), "--out", out, "--model", "nano", "--n-embd", "32",
                                "--block-size", "32", "--compact-vocab", "--batch-size", "4", "--eval-batches", "2",
                                "--threads", "1", "--peak-tflops", "1", "--log-every", "1000", "--lr", "3e-3",
                                "--warmup-iters", "2", "--max-iters", std::to_string(iters), "--ckpt-every", "10",
                                "--eval-every", "10"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A finished run of `iters` steps in `out` (replacing whatever was there).
void finished_run(const std::string& out, int iters) {
  fs::remove_all(out);
  const test::ChildResult r = test::run_child(train_cmd(out, iters));
  INFO(r.output);
  REQUIRE(r.status == 0);
}

std::vector<std::int64_t> logged_steps(const std::string& out) {
  return io::RunLogReader(gpt2::train_log_path(out)).series().step;
}

std::vector<std::int64_t> one_to(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 1; i <= n; ++i) v.push_back(i);
  return v;
}


// --resume of a run cut by a failed write: it continues, or refuses in one line saying to move the log
// aside, and doing that resumes. Either way the run reaches `iters` with strictly increasing logged steps
// (no bogus step-0 rows).
void check_resume_after_cut(const std::string& out, int iters) {
  test::ChildResult again = test::run_child(train_cmd(out, iters, {"--resume"}), {120, -1});
  INFO(again.output);
  if (again.status != 0) {
    CHECK(again.status == 1);
    REQUIRE(again.output.find("train: error:") != std::string::npos);
    CHECK(test::count_lines(again.output.substr(again.output.find("train: error:"))) == 1);
    CHECK(again.output.find("move it aside") != std::string::npos);
    fs::rename(gpt2::train_log_path(out), gpt2::train_log_path(out) + ".aside");
    again = test::run_child(train_cmd(out, iters, {"--resume"}), {120, -1});
    INFO(again.output);
  }
  REQUIRE(again.status == 0);
  const std::vector<std::int64_t> steps = logged_steps(out);
  REQUIRE(!steps.empty());
  CHECK(steps.front() >= 1);
  for (std::size_t i = 1; i < steps.size(); ++i) CHECK(steps[i] > steps[i - 1]);
  CHECK(steps.back() == iters);
}

}  // namespace

TEST_CASE("train faults: a second writer on a live run directory is refused and nothing is touched") {
  const std::string out = kRoot + "/locked";
  finished_run(out, 20);
  const std::string log_before = bytes_of(gpt2::train_log_path(out));
  const auto ckpts_before = gpt2::train_checkpoints_newest_first(out);
  REQUIRE(!ckpts_before.empty());
  {
    // Another process (this test) holds the run directory, as a live `train` does.
    const io::WriterLock held = io::WriterLock::acquire_dir(out, "test");
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--force"}, std::vector<std::string>{"--resume", "--replan"}}) {
      const test::ChildResult r = test::run_child(train_cmd(out, 30, extra), {60, -1});
      INFO(extra[0] << " -> " << r.output);
      CHECK(r.status == 1);
      REQUIRE(r.output.find("train: error:") != std::string::npos);  // after the settings line
      CHECK(test::count_lines(r.output.substr(r.output.find("train: error:"))) == 1);
      CHECK(r.output.find("being written by another gaugelab process") != std::string::npos);
      CHECK(bytes_of(gpt2::train_log_path(out)) == log_before);
      CHECK(gpt2::train_checkpoints_newest_first(out) == ckpts_before);
    }
  }
  // Two real trains: the second (--force) is refused while the first runs, the first is unharmed.
  const std::string live = kRoot + "/live";
  fs::remove_all(live);
  const pid_t first = fork();
  if (first == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    const std::vector<std::string> cmd = train_cmd(live, 100000);
    std::vector<char*> a;
    for (const std::string& s : cmd) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(gpt2::train_log_path(live)) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool started = fs::exists(gpt2::train_log_path(live));
  test::ChildResult force, resume;
  if (started) {
    force = test::run_child(train_cmd(live, 100000, {"--force"}), {60, -1});
    resume = test::run_child(train_cmd(live, 100000, {"--resume"}), {60, -1});
  }
  const bool first_alive = waitpid(first, nullptr, WNOHANG) == 0;
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
  REQUIRE(started);
  INFO(force.output << resume.output);
  CHECK(first_alive);
  CHECK(force.status == 1);
  CHECK(resume.status == 1);
  CHECK(fs::exists(gpt2::train_log_path(live)));
  CHECK(io::RunLogReader(gpt2::train_log_path(live)).series_length() > 0);
}

TEST_CASE("train faults: --resume on a damaged log ends in one line, never a hang, and keeps the log as it was") {
  const std::string out = kRoot + "/damaged";
  finished_run(out, 20);
  const std::string good = bytes_of(gpt2::train_log_path(out));
  int refused = 0;
  // Bytes of the superblock and the metadata after it (checksummed: a change there is always seen).
  for (const std::size_t off : {std::size_t{20}, std::size_t{40}, std::size_t{60}, std::size_t{200}, std::size_t{400}}) {
    std::string bad = good;
    bad[off] = static_cast<char>(bad[off] ^ 0x5A);
    put_bytes(gpt2::train_log_path(out), bad);
    const test::ChildResult r = test::run_child(train_cmd(out, 30, {"--resume", "--replan"}), {90, -1});
    INFO("byte " << off << ": " << r.output);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.signal == 0);
    if (r.status == 0) continue;  // the byte held nothing the resume reads
    ++refused;
    CHECK(r.status == 1);
    CHECK(r.output.find("train: error:") != std::string::npos);
    CHECK(test::count_lines(r.output.substr(r.output.find("train: error:"))) == 1);
    CHECK(r.output.find("move") != std::string::npos);  // says what to do
    CHECK(bytes_of(gpt2::train_log_path(out)) == bad);  // not renamed, not rewritten
    CHECK_FALSE(fs::exists(gpt2::train_log_path(out) + ".resume-src"));
  }
  CHECK(refused > 0);
}

TEST_CASE("train faults: a run directory whose name is not UTF-8 trains and resumes") {
  // Legal on Linux; the settings (and the checkpoints' config.json) record it with \xNN escapes.
  const std::string out = kRoot + "/r\xff\xfe";
  finished_run(out, 20);
  const auto ckpts = gpt2::train_checkpoints_newest_first(out);
  REQUIRE(ckpts.size() >= 2);
  fs::remove_all(ckpts[0]);  // the newest checkpoint gone: the resume starts from step 10
  const test::ChildResult r = test::run_child(train_cmd(out, 20, {"--resume"}), {120, -1});
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("resumed from") != std::string::npos);
  CHECK(logged_steps(out) == one_to(20));
}

TEST_CASE("train faults: a damaged newest checkpoint falls back to the one before") {
  const std::string out = kRoot + "/fallback";
  finished_run(out, 20);
  const auto ckpts = gpt2::train_checkpoints_newest_first(out);
  REQUIRE(ckpts.size() >= 2);
  fs::resize_file(ckpts[0] + "/model.safetensors", 100);  // torn: the header promises more
  const test::ChildResult r = test::run_child(train_cmd(out, 30, {"--resume", "--replan"}), {120, -1});
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("skipping checkpoint " + ckpts[0]) != std::string::npos);
  CHECK(logged_steps(out) == one_to(30));  // steps 11..20 redone once, not twice
  CHECK(fs::exists(fs::path(ckpts[0]).parent_path() / ("damaged-" + fs::path(ckpts[0]).filename().string())));
}

TEST_CASE("train faults: an empty log does not block --resume, nor a failed first run a new one") {
  const std::string out = kRoot + "/empty_log";
  finished_run(out, 20);
  put_bytes(gpt2::train_log_path(out), "");  // a log whose writer died before its first flush
  const test::ChildResult r = test::run_child(train_cmd(out, 30, {"--resume", "--replan"}), {120, -1});
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("empty") != std::string::npos);
  const std::vector<std::int64_t> steps = logged_steps(out);
  REQUIRE(!steps.empty());
  CHECK(steps.front() == 21);
  CHECK(steps.back() == 30);

  // A run that failed before its first step left only an empty log: a plain rerun may replace it.
  const std::string failed = kRoot + "/failed_first";
  fs::remove_all(failed);
  fs::create_directories(failed);
  put_bytes(gpt2::train_log_path(failed), "");
  const test::ChildResult again = test::run_child(train_cmd(failed, 5), {120, -1});
  INFO(again.output);
  CHECK(again.status == 0);
  CHECK(logged_steps(failed) == one_to(5));
}

TEST_CASE("train faults: a failed log write ends in one line, --resume keeps only rows that were written") {
  const std::string ref = kRoot + "/write_ref", out = kRoot + "/write_cut";
  finished_run(ref, 20);
  const auto size = static_cast<long long>(fs::file_size(gpt2::train_log_path(ref)));
  for (const double share : {0.1, 0.5, 0.9}) {
    fs::remove_all(out);
    test::ChildOptions limited{120, static_cast<long long>(share * static_cast<double>(size))};
    const test::ChildResult cut = test::run_child(train_cmd(out, 20), limited);
    INFO("files limited to " << limited.max_file_bytes << " of " << size << " bytes: " << cut.output);
    CHECK(cut.signal == 0);
    CHECK(cut.status == 1);
    CHECK(cut.output.find("HDF5-DIAG") == std::string::npos);
    REQUIRE(cut.output.find("train: error:") != std::string::npos);
    CHECK(test::count_lines(cut.output.substr(cut.output.find("train: error:"))) == 1);
    check_resume_after_cut(out, 20);
  }
}

TEST_CASE("train faults: a token id beyond the vocabulary in the middle of train.bin is refused before step 1") {
  // Once caught only when a training window reached it (hours in, or never); now every id is checked
  // when the files are opened: one line naming the file, the position and the id, no step taken.
  const std::string data = kRoot + "/bad_id_data", out = kRoot + "/bad_id_run";
  fs::remove_all(data);
  fs::remove_all(out);
  fs::create_directories(data);
  for (const char* f : {"train.bin", "val.bin"}) fs::copy_file(data_dir() + "/" + f, data + "/" + f);
  std::string bytes = bytes_of(data + "/train.bin");
  const std::size_t middle = bytes.size() / 4;  // token index of the middle (2 bytes per id, no header)
  bytes[2 * middle] = static_cast<char>(0x60);       // 60000 = 0xEA60, little-endian
  bytes[2 * middle + 1] = static_cast<char>(0xEA);
  put_bytes(data + "/train.bin", bytes);
  std::vector<std::string> cmd = train_cmd(out, 5);
  cmd[3] = data;                                                                 // --data
  cmd.erase(std::find(cmd.begin(), cmd.end(), std::string("--compact-vocab")));  // the full GPT-2 vocabulary
  const test::ChildResult r = test::run_child(cmd, {120, -1});
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.status == 1);
  REQUIRE(r.output.find("train: error:") != std::string::npos);
  const std::string err = r.output.substr(r.output.find("train: error:"));
  CHECK(test::count_lines(err) == 1);
  CHECK(err.find("train.bin") != std::string::npos);
  CHECK(err.find("token id 60000 at position " + std::to_string(middle)) != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/checkpoints"));  // no step was taken, so none was saved
}

#ifdef GAUGELAB_ENOSPC_SHIM
TEST_CASE("train faults: a full disk (ENOSPC) ends the run in one line, --resume continues from what is intact") {
  const std::string ref = kRoot + "/enospc_ref", out = kRoot + "/enospc_cut";
  finished_run(ref, 20);
  long long bytes = 0;  // what the whole run wrote: log, checkpoints, samples
  for (const auto& e : fs::recursive_directory_iterator(ref))
    if (e.is_regular_file()) bytes += static_cast<long long>(e.file_size());
  for (const double share : {0.3, 0.7}) {
    fs::remove_all(out);
    test::ChildOptions full_disk{120, -1, static_cast<long long>(share * static_cast<double>(bytes))};
    const test::ChildResult cut = test::run_child(train_cmd(out, 20), full_disk);
    INFO("disk full after " << full_disk.enospc_after << " of " << bytes << " bytes: " << cut.output);
    CHECK(cut.signal == 0);
    CHECK(cut.status == 1);
    CHECK(cut.output.find("HDF5-DIAG") == std::string::npos);
    REQUIRE(cut.output.find("train: error:") != std::string::npos);
    const std::string err = cut.output.substr(cut.output.find("train: error:"));
    CHECK(test::count_lines(err) == 1);
    CHECK(err.find("No space left on device") != std::string::npos);
    check_resume_after_cut(out, 20);
  }
}
#endif

}  // namespace GAUGELAB_TU
