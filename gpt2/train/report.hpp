// What a run prints and records about itself (report.cpp): every setting at the start, and the log's
// /summary and the closing lines at the end.
#pragma once

#include <string>

#include "gpt2/train/run_state.hpp"

namespace gaugelab::gpt2 {

void print_settings(const TrainRun& r, const std::string& resumed_from);
/// Writes /summary, closes the log, prints the closing summary.
TrainResult finish_train(TrainRun& run, double seconds);

}  // namespace gaugelab::gpt2
