// A training run's directory (--out): where its files lie, which complete checkpoints it holds, whether an
// earlier run there failed before its first step, and the line that says from which of them a failed run
// continues. The readers that only need to find a run's log or checkpoints (option checks, the settings printout,
// tests) include this alone; writing and loading checkpoints is checkpoints.hpp's.
//
//   OUT/log.h5                          the HDF5 run log (kind "gpt2/train", log.hpp)
//   OUT/checkpoints/step_00001000/      one checkpoint per saved step (checkpoints.hpp), complete once
//                                       optimizer.safetensors is in it
//   OUT/checkpoints/.tmp-step_00001000/ a checkpoint being written; renamed into place when complete
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gaugelab::gpt2 {

class DistFailure;    // gpt2/dist/dist_failure.hpp
struct TrainOptions;  // api.hpp

std::string train_log_path(const std::string& out);         // OUT/log.h5
std::string train_checkpoints_dir(const std::string& out);  // OUT/checkpoints
std::string train_checkpoint_name(std::int64_t step);       // step_00001000

/// The newest complete checkpoint directory of a run, if any (leftover .tmp-* directories are removed).
std::optional<std::string> latest_train_checkpoint(const std::string& out);

/// The complete checkpoint directories of a run, newest first.
std::vector<std::string> train_checkpoints_newest_first(const std::string& out);

/// A directory whose earlier run failed before logging its first step (no checkpoint, and a log that is missing,
/// empty or holds no rows): a new run may replace it without --force.
bool failed_before_first_step(const std::string& out);

/// What a rank does after a collective failed because another rank is gone or late: `failure` again, its line
/// extended by how to continue: every rank again with --resume --out OUT, from the newest whole checkpoint in OUT
/// or, newer, the one of `last_checkpoint_step` (-1: none this process saw; a run started with --resume had one).
/// OUT is read only when `read_run_dir` (its checkpoints are this run's: past the set-up, or a --resume run); a
/// peer that timed out rather than closed (it may still live) makes the line ask to stop every rank first.
DistFailure with_resume_hint(const DistFailure& failure, const TrainOptions& o, std::int64_t last_checkpoint_step,
                             bool read_run_dir);

}  // namespace gaugelab::gpt2
