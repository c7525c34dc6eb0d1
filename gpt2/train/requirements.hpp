// What a run's settings need of its model, checked in one station (setup_train calls it once the model is
// built or loaded, before anything moves it): the columns of the condition's row (conditions.hpp:
// needs_qk_rows, optimizers) and the flags that need a part of the model, each one row of model_needs().
// A missing part is a usage error naming the setting that asks for it and the placement (--multipliers).
#pragma once

#include <string>
#include <vector>

#include "gpt2/model/config.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/conditions.hpp"

namespace gaugelab::gpt2 {

/// A part of the model a setting may need.
enum class ModelPart {
  qk_rows,      // row multipliers on q and k (per-head Q/K scales)
  vo,           // row multipliers on v and columns on attn_out (the V/O pair's scales)
  projectable,  // attention without multipliers and without QK-norm (the gradient projection's gauge)
};

/// One requirement: the setting that asks (as the message names it) and the part it needs.
struct ModelNeed {
  ModelPart part;
  std::string (*asked_by)(const Condition& c, const TrainOptions& o, bool fresh);  // "" when this run does not ask
};

/// Every requirement, in the order they are checked.
const std::vector<ModelNeed>& model_needs();

/// Why `mc` lacks `part` ("needs row multipliers on q and k"); "" when it has it.
std::string missing_part(ModelPart part, const ModelConfig& mc);

/// Throws io::UsageError for the condition's optimizer column (o.optimizer not among the row's optimizers) and
/// for the first row of model_needs() that this run asks for and `mc` lacks. `fresh`: a run that starts at
/// step 0 (a resumed one no longer starts from --qk-gauge-init).
void check_model_needs(const Condition& c, const TrainOptions& o, const ModelConfig& mc, bool fresh);

}  // namespace gaugelab::gpt2
