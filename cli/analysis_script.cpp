// Finding and running analysis/<script>.py for the script verbs (see analysis_script.hpp).
#include "analysis_script.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

namespace gaugelab::cli {

namespace fs = std::filesystem;

std::vector<fs::path> analysis_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("GAUGELAB_ANALYSIS_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path().parent_path() / "analysis");
    dirs.push_back(exe.parent_path().parent_path() / "share" / "gaugelab" / "analysis");
  }
  dirs.push_back(fs::path(GAUGELAB_SOURCE_DIR) / "analysis");
  return dirs;
}

AnalysisLocation locate_analysis_script(const std::string& script) {
  AnalysisLocation where;
  const char* py = std::getenv("GAUGELAB_ANALYSIS_PY");
  where.python = (py && *py) ? py : GAUGELAB_ANALYSIS_PYTHON;
  std::string searched;
  for (const auto& d : analysis_dirs()) {
    if (fs::is_regular_file(d / script)) {
      where.script = d / script;
      return where;
    }
    searched += (searched.empty() ? "" : ", ") + d.string();
  }
  throw std::runtime_error("cannot find analysis/" + script + " (searched " + searched + "; set GAUGELAB_ANALYSIS_DIR)");
}

void exec_analysis_script(const std::string& verb, const std::string& script, const Args& args) {
  const AnalysisLocation where = locate_analysis_script(script);
  const std::string prog = "gaugelab " + verb;
  ::setenv("GAUGELAB_PROG", prog.c_str(), 1);
  std::vector<std::string> words = {where.python, where.script.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(where.python.c_str(), argv.data());
  throw std::runtime_error("cannot run " + where.python + " (" + std::strerror(errno) + "; set GAUGELAB_ANALYSIS_PY)");
}

}  // namespace gaugelab::cli
