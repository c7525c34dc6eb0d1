// setup_train: a run from its options to the first step (setup.cpp), station by station: run_dir.hpp (the run
// directory's paths), checkpoints.hpp (which checkpoint a resumed run continues), resume.hpp (what it must share
// with it), build_run.hpp (data directory, model), micro_batch.hpp (whether a micro-batch fits), report.hpp (the
// settings printout), matmul_peak.hpp (the MFU denominator and the bf16 path).
#pragma once

#include <c10/core/Device.h>

#include "gpt2/train/api.hpp"
#include "gpt2/train/optimizer.hpp"
#include "gpt2/train/run_state.hpp"
#include "io/provenance.hpp"

namespace gaugelab::gpt2 {

/// Validates the options, forms the data-parallel group, builds or resumes model, optimizer, data
/// and log, prints every setting. Throws io::UsageError / std::runtime_error with one line.
TrainRun setup_train(const TrainOptions& options, io::Provenance prov);
/// The optimizer's groups as the options and the condition `c` (the row of o.condition) set them (weight
/// decay per group, multiplier lr, clipping set, Muon); on CUDA, Muon's NS5 runs in bfloat16.
OptimizerSettings optimizer_settings(const TrainOptions& o, const Condition& c, c10::Device device);

}  // namespace gaugelab::gpt2
