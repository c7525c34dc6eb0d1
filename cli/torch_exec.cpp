// The light front door's hand-over to the GPT-2 half: `gaugelab` links no LibTorch (a toy run starts in
// milliseconds and a few MB instead of the ~0.25 CPU-s and ~120 MB of loading libtorch_cpu; ~0.42 s and 490 MB while
// the tier linked libtorch_cuda too: gpt2/model/cuda_side.hpp), so a
// verb that needs the GPT-2 tier replaces this process with `gaugelab-torch`, found beside this
// executable, on the same command line. exec keeps the process id, the open descriptors, the
// environment and the exit status, so callers (scripts, signals, the tests' SIGKILLs) see one process.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "verbs.hpp"

namespace gaugelab::cli {

namespace {

std::vector<char*>& command_line() {
  static std::vector<char*> argv;
  return argv;
}

}  // namespace

void remember_command_line(int argc, char** argv) { command_line().assign(argv, argv + argc); }

std::string torch_build_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  if (self.filename() == GAUGELAB_TORCH_EXE) return {};  // this is the GPT-2 half: nothing to hand over to
  return (self.parent_path() / GAUGELAB_TORCH_EXE).string();
}

void exec_torch_build() {
  const std::string path = torch_build_path();
  if (path.empty() || command_line().empty() || ::access(path.c_str(), X_OK) != 0) return;
  std::vector<char*> argv = command_line();
  argv[0] = const_cast<char*>(path.c_str());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(path.c_str(), argv.data());
  std::cerr << "gaugelab: error: cannot run " << path << ": " << std::strerror(errno) << "\n";
  std::exit(1);
}

}  // namespace gaugelab::cli
