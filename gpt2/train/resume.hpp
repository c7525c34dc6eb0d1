// Resuming a run (resume.cpp): the checkpoint it continues, the settings it must share with it, its planned
// schedule, the trainer state a checkpoint carries (TrainState as JSON); and the loop's checkpoint of a step,
// which writes what resuming reads.
#pragma once

#include <csignal>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "gpt2/dist/dist_failure.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/train/run_state.hpp"

namespace gaugelab::gpt2 {

/// Refuses a changed identity option (declare_train_options' identity marks) naming it; reports any
/// other changed setting on stderr.
void check_resume_options(const nlohmann::json& saved, const nlohmann::json& now);
LrSchedule resumed_schedule(const TrainOptions& o, const nlohmann::json& saved, const LrSchedule& now, bool rank0);
std::tuple<std::optional<std::string>, std::optional<Checkpoint>, std::optional<safetensors::File>>
newest_loadable_checkpoint(const std::string& out, c10::Device device, bool rank0);
bool failed_before_first_step(const std::string& out);

nlohmann::json train_state_json(const TrainRun& run);
TrainState train_state_from_json(const nlohmann::json& j);

/// Checkpoint of the current step (rank 0 writes; every rank waits for it). Sets last_checkpoint_step: on
/// rank 0 once its files are in place, on the others once the wait says rank 0 got there.
void save_state(TrainRun& run);

/// What a rank does after a collective failed because another rank is gone or late: `failure` again, its line
/// extended by how to continue: every rank again with --resume --out OUT, from the newest whole checkpoint in OUT
/// or, newer, the one of `last_checkpoint_step` (-1: none this process saw; a run started with --resume had one).
/// OUT is read only when `read_run_dir` (its checkpoints are this run's: past the set-up, or a --resume run); a
/// peer that timed out rather than closed (it may still live) makes the line ask to stop every rank first.
DistFailure with_resume_hint(const DistFailure& failure, const TrainOptions& o, std::int64_t last_checkpoint_step,
                             bool read_run_dir);

/// The loop's last station: a checkpoint at every --ckpt-every step, at the last step and when a stop was
/// requested (SIGTERM/SIGINT on any rank: all ranks stop together); none with --ckpt-every 0. Returns true when
/// the run stops here.
bool checkpoint_or_stop(TrainRun& run, int signal, std::int64_t step, bool last);

}  // namespace gaugelab::gpt2
