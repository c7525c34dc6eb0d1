// See checkpoint_heads.cpp.
#pragma once

#include "harness/head_source.hpp"

namespace gaugelab::cli {

/// The loader `diag heads --checkpoint` uses; empty when this build cannot read checkpoints.
harness::CheckpointHeadLoader checkpoint_head_loader();

}  // namespace gaugelab::cli
