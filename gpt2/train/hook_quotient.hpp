// The quotient hook (hook_quotient.cpp, conditions E and Erms): --quotient, --quotient-every, --quotient-damping,
// --quotient-vo, --quotient-scale. Its registry row: step_hook_kinds.def.
#pragma once

#include <memory>

namespace gaugelab::gpt2 {

struct TrainOptions;
class StepHook;

std::unique_ptr<StepHook> make_quotient_hook(const TrainOptions& o);

}  // namespace gaugelab::gpt2
