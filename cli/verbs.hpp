// The front door's verb table: one row per verb, naming the function that runs it.
// Each cli/verb_*.cpp adapter parses its options (io::Options) and calls one tier function.
#pragma once

#include <string>
#include <vector>

namespace gaugelab::cli {

using Args = std::vector<std::string>;  // the arguments after the verb

struct Verb {
  const char* name;     // as typed: `gaugelab <name>`
  const char* summary;  // one line for `gaugelab --help`
  int (*run)(const Args& args);  // returns the exit status (0 ok, 1 runtime failure)
};

/// Every verb, in the order `gaugelab --help` lists them.
const std::vector<Verb>& verbs();

// Adapters (cli/verb_*.cpp).
int verb_info(const Args& args);
int verb_toy(const Args& args);
int verb_sweep(const Args& args);
int verb_merge(const Args& args);
int verb_diag(const Args& args);
int verb_prepare(const Args& args);
int verb_train(const Args& args);
int verb_eval(const Args& args);
int verb_generate(const Args& args);
int verb_inspect(const Args& args);
int verb_merge_models(const Args& args);  // verb_landscape.cpp
int verb_hessian(const Args& args);        // verb_landscape.cpp
int verb_export(const Args& args);
int verb_import(const Args& args);
int verb_plot(const Args& args);     // verb_analysis.cpp: runs analysis/plot_runs.py
int verb_compare(const Args& args);  // verb_analysis.cpp: runs analysis/compare_runs.py
int verb_tensorboard(const Args& args);  // verb_analysis.cpp: runs analysis/tensorboard_export.py

/// For verbs whose tier is not in this executable: hands over to `gaugelab-torch` when it is beside this
/// one (exec_torch_build), else says so plainly and fails (exit 1).
int not_built(const char* verb, const char* what);

// cli/torch_exec.cpp: the light front door (no LibTorch) hands the GPT-2 verbs to `gaugelab-torch`.
void remember_command_line(int argc, char** argv);  // main() records its argv for the hand-over
/// Replaces this process with `gaugelab-torch` (beside this executable) on the same command line; returns
/// only when there is none, or when this process is it.
void exec_torch_build();

}  // namespace gaugelab::cli
