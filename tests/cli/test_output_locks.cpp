// One writer per output: while another process writes a run directory or a log, a verb that would
// write there (with --force too) is refused with one line and exit 1, and nothing there changes.
// The other writer is this test process, holding the lock a live gaugelab holds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "io/writer_lock.hpp"
#include "support/child.hpp"
#include "support/process.hpp"
#include "tests/io/temp_dir.hpp"

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `argv` refused because of the held lock: exit 1, one line saying another process writes.
void check_refused(const std::vector<std::string>& argv) {
  const test::ChildResult r = test::run_child(argv, {120, -1});
  INFO(argv[1] << ": " << r.output);
  CHECK_FALSE(r.timed_out);
  CHECK(r.status == 1);
  CHECK(test::count_lines(r.output.substr(r.output.find("error:") == std::string::npos ? 0 : r.output.find("error:"))) == 1);
  CHECK(r.output.find("being written by another") != std::string::npos);
}

}  // namespace

TEST_CASE("output locks: prepare into a directory another process writes is refused", "[cli][locks]") {
  test::TempDir dir;
  const std::string out = dir.file("data");
  const io::WriterLock held = io::WriterLock::acquire_dir(out, "test");
  check_refused({kBin, "prepare", "--synthetic", "--docs", "50", "--force", "--out", out});
  CHECK(fs::is_empty(out));  // no shard of the refused run mixed in
}

TEST_CASE("output locks: toy and diag --force over a log another process writes are refused", "[cli][locks]") {
  test::TempDir dir;
  // diag at width 16, head width 8: 1.8 s a run in the sanitizer build (53 s at width 64, 6 minutes at 768).
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"toy", "relu", "--seeds", "1", "--steps", "50"},
        std::vector<std::string>{"diag", "heads", "--quick", "--d-model", "16", "--d-head", "8"}}) {
    const std::string out = dir.file(verb[0] + ".h5");
    std::vector<std::string> argv = {kBin};
    argv.insert(argv.end(), verb.begin(), verb.end());
    argv.insert(argv.end(), {"--threads", "1", "--out", out});
    REQUIRE(test::run_child(argv, {300, -1}).status == 0);
    const std::string before = bytes_of(out);
    argv.push_back("--force");
    {
      const io::WriterLock held = io::WriterLock::acquire(out);
      check_refused(argv);
      CHECK(bytes_of(out) == before);
    }
    CHECK(test::run_child(argv, {300, -1}).status == 0);  // the lock gone, --force replaces it
  }
}

TEST_CASE("output locks: merge --force over a log another process writes is refused", "[cli][locks]") {
  test::TempDir dir;
  const std::string s0 = dir.file("s0.h5"), s1 = dir.file("s1.h5"), out = dir.file("merged.h5");
  for (const auto& [shard, file] : {std::pair<std::string, std::string>{"0/2", s0}, {"1/2", s1}})
    REQUIRE(test::run_child({kBin, "sweep", "relu", "--lr", "1e-3,2e-3", "--seeds", "1", "--steps", "20", "--threads",
                             "1", "--shard", shard, "--out", file},
                            {300, -1})
                .status == 0);
  const std::vector<std::string> argv = {kBin, "merge", s0, s1, "--out", out};
  REQUIRE(test::run_child(argv, {300, -1}).status == 0);
  const std::string before = bytes_of(out);
  std::vector<std::string> forced = argv;
  forced.push_back("--force");
  {
    const io::WriterLock held = io::WriterLock::acquire(out);
    check_refused(forced);
    CHECK(bytes_of(out) == before);
  }
  CHECK(test::run_child(forced, {300, -1}).status == 0);
}
