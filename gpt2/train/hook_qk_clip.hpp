// The QK-Clip hook (hook_qk_clip.cpp, condition QKclip): --qk-clip-tau, --qk-clip-on. The clip itself: qk_clip.hpp.
// Its registry row: step_hook_kinds.def.
#pragma once

#include <memory>

namespace gaugelab::gpt2 {

struct TrainOptions;
class StepHook;

std::unique_ptr<StepHook> make_qk_clip_hook(const TrainOptions& o);

}  // namespace gaugelab::gpt2
