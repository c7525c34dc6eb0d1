// The executable's contract: exit codes and one-line errors (runs build/gaugelab as a process).
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct Result {
  int status;
  std::string output;  // stdout + stderr
};

Result run(const std::string& args) {
  const std::string cmd = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("front door: help and version succeed", "[cli]") {
  auto r = run("--help");
  CHECK(r.status == 0);
  CHECK(r.output.find("train") != std::string::npos);
  CHECK(run("--version").status == 0);
  CHECK(run("info --help").status == 0);
}

TEST_CASE("front door: usage errors exit 2 with one line naming the problem", "[cli]") {
  auto r = run("nosuchverb");
  CHECK(r.status == 2);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("nosuchverb") != std::string::npos);
  r = run("info --bogus-flag 3");
  CHECK(r.status == 2);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find("--bogus-flag") != std::string::npos);
  CHECK(run("").status == 2);
}
