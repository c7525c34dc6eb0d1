// The GaugeFix hooks (hook_gauge_fix.cpp): gauge_fix (--gaugefix-mode, --gaugefix-vo, --gaugefix-eps, the cadence
// --gaugefix-every) and qk_cap (--qk-cap, Dcap's magnitude control). Their registry rows: step_hook_kinds.def.
#pragma once

#include <memory>

namespace gaugelab::gpt2 {

struct TrainOptions;
class StepHook;

std::unique_ptr<StepHook> make_gauge_fix_hook(const TrainOptions& o);
std::unique_ptr<StepHook> make_qk_cap_hook(const TrainOptions& o);

}  // namespace gaugelab::gpt2
