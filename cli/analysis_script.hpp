// Verbs that are analysis scripts (`gaugelab plot`, `compare`, `tensorboard`): the binary finds
// analysis/<script>.py and the analysis Python, then becomes `python script args...`. The script owns
// the verb's flags and its --help (its usage line reads "gaugelab <verb>", from GAUGELAB_PROG).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "verbs.hpp"

namespace gaugelab::cli {

/// Where the analysis scripts and their interpreter are.
struct AnalysisLocation {
  std::string python;           // $GAUGELAB_ANALYSIS_PY, else the build's GAUGELAB_ANALYSIS_PYTHON (/usr/bin/python3)
  std::filesystem::path script;  // the script found in the first folder of analysis_dirs() that holds it
};

/// Folders searched, in order: $GAUGELAB_ANALYSIS_DIR; <binary>/../analysis (a build folder inside the
/// clone); <binary>/../share/gaugelab/analysis (an installed layout); the source tree the binary was built from.
std::vector<std::filesystem::path> analysis_dirs();

/// Finds `script` (e.g. "plot_runs.py"); throws std::runtime_error naming the folders searched.
AnalysisLocation locate_analysis_script(const std::string& script);

/// Replaces this process with the script run on `args`; throws std::runtime_error if that fails.
[[noreturn]] void exec_analysis_script(const std::string& verb, const std::string& script, const Args& args);

}  // namespace gaugelab::cli
