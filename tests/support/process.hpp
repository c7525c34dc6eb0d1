// Running the front door (build/gaugelab) as a child process from a test: exit status and the
// combined stdout + stderr, for the contract tests of every verb (exit codes, one-line errors).
#pragma once

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <sys/wait.h>

namespace gaugelab::test {

struct ProcessResult {
  int status;          // exit status; -1 if the child did not exit normally (signal)
  std::string output;  // stdout + stderr
};

/// Runs a shell command line, capturing its output (stderr merged into stdout).
inline ProcessResult run_command(const std::string& command_line) {
  const std::string cmd = command_line + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("run_command: popen failed for: " + command_line);
  std::string out;
  std::array<char, 4096> buf{};
  while (const std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

/// Runs `gaugelab ARGS` from the build tree (ARGS is a shell-quoted argument string).
inline ProcessResult run_gaugelab(const std::string& args) {
  return run_command(std::string(GAUGELAB_BINARY_DIR) + "/gaugelab " + args);
}

/// Newlines in s: a one-line error has exactly one.
inline std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

}  // namespace gaugelab::test
