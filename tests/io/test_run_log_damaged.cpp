// Damaged logs: a run log with one changed byte, opened by a reader (merge, sweep resume, train
// resume) or reopened for appending, ends in a one-line error naming the file (or reads back, when
// the byte was raw data), never in a hang. HDF5's SWMR reader retries a metadata block whose
// checksum fails with sleeps that double each time; unbounded, that is forever.
#include <catch2/catch.hpp>
#include <hdf5.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "io/h5_helpers.hpp"
#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "temp_dir.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::io;
using gaugelab::test::TempDir;

namespace {

constexpr auto kChildLimit = std::chrono::seconds(20);  // a child still running after this has hung

enum Outcome { kRead = 0, kErrorNamingFile = 1, kErrorOther = 2, kHung = 100, kCrashed = 101 };

Provenance provenance() {
  Provenance p;
  p.kind = "test/damaged";
  p.argv = {"test_io"};
  p.config = nlohmann::json::object();
  return p;
}

// A small log with every kind of member, closed cleanly (summary written).
void write_log(const std::string& path) {
  RunLog log = RunLog::create(path, provenance(), false);
  log.declare_series({"loss", "lr"});
  log.declare_heads({"s_q"}, 2, 2);
  log.declare_table("runs", {{"seed", DType::i64}, {"name", DType::str, 8}});
  log.declare_array("a", {3});
  log.start();
  for (std::int64_t i = 0; i < 40; ++i) log.append_series(i, {1.0 / static_cast<double>(i + 1), 0.5});
  gaugelab::core::Mat<double> m(2, 2);
  m << 1, 2, 3, 4;
  for (std::int64_t i = 0; i < 5; ++i) log.append_heads(i, {m});
  for (std::int64_t i = 0; i < 7; ++i) {
    std::string name = "r";
    name += std::to_string(i);
    log.append_row("runs", {Cell(i), Cell(name)});
  }
  const double a[3] = {1, 2, 3};
  log.write_array("a", a, 3);
  log.set_summary("final", 0.25);
  log.close();
}

// What a verb does with a log: read everything back, or reopen it to append (resume).
void use_log(const std::string& path, bool append) {
  if (append) {
    RunLog log = RunLog::open_append(path);
    log.append_series(40, {0.1, 0.5});
    log.close();
    return;
  }
  const RunLogReader r(path);
  r.root();
  r.series();
  r.heads("s_q");
  r.table("runs");
  r.array("a");
  r.summary();
}

// Runs use_log in a child process and waits for it at most kChildLimit. With `attempts` > 0 the child's
// readers make that many metadata read attempts; with a `message_file` the child writes its error there.
Outcome outcome_of(const std::string& path, bool append, unsigned attempts = 0, const std::string& message_file = "") {
  const pid_t pid = fork();
  if (pid == 0) {
    if (attempts > 0) h5::set_metadata_read_attempts(attempts);
    try {
      use_log(path, append);
      _exit(kRead);
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      if (!message_file.empty()) std::ofstream(message_file) << msg;
      const bool one_line_naming_file = msg.find(path) != std::string::npos && msg.find('\n') == std::string::npos;
      _exit(one_line_naming_file ? kErrorNamingFile : kErrorOther);
    } catch (...) {
      _exit(kErrorOther);
    }
  }
  REQUIRE(pid > 0);
  const auto deadline = std::chrono::steady_clock::now() + kChildLimit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return kHung;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (!WIFEXITED(status)) return kCrashed;
  return static_cast<Outcome>(WEXITSTATUS(status));
}

std::string join(const std::vector<std::size_t>& v) {
  std::string s;
  for (std::size_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s.empty() ? "-" : s;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST_CASE("run log: one changed byte gives an error or the data, never a hang", "[io][run_log][damaged]") {
  TempDir dir;
  const std::string good = dir.file("good.h5"), bad = dir.file("bad.h5");
  write_log(good);
  const std::string bytes = read_bytes(good);
  REQUIRE(bytes.size() > 1000);
  REQUIRE(outcome_of(good, false) == kRead);  // the undamaged log reads back

  // Every byte of the superblock and the first metadata, then a stride over the rest of the file.
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < std::min<std::size_t>(bytes.size(), 1024); i += 3) offsets.push_back(i);
  for (std::size_t i = 1024; i < bytes.size(); i += bytes.size() / 150 + 1) offsets.push_back(i);

  for (const bool append : {false, true}) {
    std::map<Outcome, int> count;
    std::vector<std::size_t> hung, crashed, unnamed;
    for (const std::size_t off : offsets) {
      std::string damaged = bytes;
      damaged[off] = static_cast<char>(damaged[off] ^ 0xA5);
      write_bytes(bad, damaged);
      const Outcome o = outcome_of(bad, append);
      ++count[o];
      if (o == kHung) hung.push_back(off);
      if (o == kCrashed) crashed.push_back(off);
      if (o == kErrorOther) unnamed.push_back(off);
    }
    INFO((append ? "open_append" : "reader") << ": " << offsets.size() << " offsets, " << count[kRead] << " read, "
                                             << count[kErrorNamingFile] << " one-line errors, " << count[kHung]
                                             << " hung, " << count[kCrashed] << " crashed, " << count[kErrorOther]
                                             << " errors not naming the file; crashed at " << join(crashed)
                                             << "; hung at " << join(hung));
    CHECK(hung.empty());
    CHECK(crashed.empty());
    CHECK(unnamed.empty());
    CHECK(count[kErrorNamingFile] > 0);  // the damage was seen, not just skipped over
    std::printf("damaged-log %s: %zu offsets: %d read, %d one-line errors, %d hung, %d crashed\n",
                append ? "open_append" : "reader", offsets.size(), count[kRead], count[kErrorNamingFile],
                count[kHung], count[kCrashed]);
  }
}

TEST_CASE("run log: one metadata read attempt (the fuzz target's) ends as the reader's default does",
          "[io][run_log][damaged]") {
  CHECK(h5::metadata_read_attempts() == h5::kMetadataReadAttempts);
  CHECK_THROWS_AS(h5::set_metadata_read_attempts(0), std::invalid_argument);
  CHECK(h5::metadata_read_attempts() == h5::kMetadataReadAttempts);  // a refused value changes nothing
  TempDir dir;
  const std::string good = dir.file("good.h5"), bad = dir.file("bad.h5");
  const std::string msg_default = dir.file("default.txt"), msg_one = dir.file("one.txt");
  write_log(good);
  const std::string bytes = read_bytes(good);
  // The superblock and first metadata (where checksummed blocks fail and HDF5 retries), then a stride.
  int differing = 0, errors = 0, offsets = 0;
  std::string first_difference;
  for (std::size_t off = 0; off < bytes.size(); off += off < 1024 ? 7 : bytes.size() / 60 + 1) {
    std::string damaged = bytes;
    damaged[off] = static_cast<char>(damaged[off] ^ 0xA5);
    write_bytes(bad, damaged);
    std::filesystem::remove(msg_default);
    std::filesystem::remove(msg_one);
    const Outcome a = outcome_of(bad, false, 0, msg_default);
    const Outcome b = outcome_of(bad, false, 1, msg_one);
    ++offsets;
    if (a != kRead) ++errors;
    if (a != b || read_bytes(msg_default) != read_bytes(msg_one)) {
      if (differing++ == 0) {
        first_difference = "offset " + std::to_string(off) + ": '" + read_bytes(msg_default) + "' vs '" +
                           read_bytes(msg_one) + "'";
      }
    }
  }
  INFO(offsets << " offsets, " << errors << " errors, " << differing << " differing; first: " << first_difference);
  CHECK(errors > 0);  // the damage reached checksummed metadata
  CHECK(differing == 0);
}

TEST_CASE("run log: an extent that claims rows the file does not store is refused, not read as fill values",
          "[io][run_log][damaged]") {
  // The fuzzer's slow input: a damaged extent (here grown to 1.5e8 rows without data, /commit gone) made every
  // reader allocate and fill gigabytes (30 s for `compare` on one log). The reader now refuses it at once.
  TempDir dir;
  const std::string path = dir.file("grown.h5");
  write_log(path);
  {
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    for (const char* name : {"/series/step", "/series/loss", "/series/lr"}) {
      const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
      REQUIRE(d >= 0);
      const hsize_t rows = 150'000'000;
      REQUIRE(H5Dset_extent(d, &rows) >= 0);
      H5Dclose(d);
    }
    if (H5Lexists(f, "/commit", H5P_DEFAULT) > 0) REQUIRE(H5Ldelete(f, "/commit", H5P_DEFAULT) >= 0);
    H5Fclose(f);
  }
  CHECK(outcome_of(path, false) == kErrorNamingFile);
  try {
    RunLogReader(path).series();
    FAIL("the grown extent was read");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("claims 150000000 values") != std::string::npos);
  }
  // The undamaged log still reads (its last chunk is partly written: the one-chunk allowance).
  const std::string good = dir.file("good.h5");
  write_log(good);
  CHECK(outcome_of(good, false) == kRead);
}

}  // namespace GAUGELAB_TU
