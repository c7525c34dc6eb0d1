// Resuming a run (resume.cpp): the settings it must share with the checkpoint it continues and its planned
// schedule. Which checkpoint it continues, and the trainer state a checkpoint carries: checkpoints.hpp.
#pragma once

#include <nlohmann/json.hpp>

#include "gpt2/train/api.hpp"
#include "gpt2/train/schedule.hpp"

namespace gaugelab::gpt2 {

/// Refuses a changed identity option (declare_train_options' identity marks) naming it; reports any
/// other changed setting on stderr.
void check_resume_options(const nlohmann::json& saved, const nlohmann::json& now);
LrSchedule resumed_schedule(const TrainOptions& o, const nlohmann::json& saved, const LrSchedule& now, bool rank0);

}  // namespace gaugelab::gpt2
