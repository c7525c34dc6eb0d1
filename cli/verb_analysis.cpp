// `gaugelab plot RUN...` -> analysis/plot_runs.py; `gaugelab compare RUN...` -> analysis/compare_runs.py;
// `gaugelab tensorboard RUN... --out DIR` -> analysis/tensorboard_export.py.
// Flags and --help are the scripts' own (`gaugelab plot --help`).
#include "analysis_script.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_plot(const Args& args) { exec_analysis_script("plot", "plot_runs.py", args); }

int verb_compare(const Args& args) { exec_analysis_script("compare", "compare_runs.py", args); }

int verb_tensorboard(const Args& args) { exec_analysis_script("tensorboard", "tensorboard_export.py", args); }

}  // namespace gaugelab::cli
