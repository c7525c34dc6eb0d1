// See checkpoint_heads.cpp.
#pragma once

#include "harness/head_source.hpp"

namespace gaugelab::cli {

/// The loader `diag heads --checkpoint` uses; empty when this build cannot read checkpoints.
harness::CheckpointHeadLoader checkpoint_head_loader();
/// The loader of a checkpoint layer's real inputs (`diag heads --checkpoint --data`); empty likewise.
harness::CheckpointInputsLoader checkpoint_inputs_loader();

}  // namespace gaugelab::cli
