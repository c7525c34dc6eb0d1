// The hook registry (hook_registry.hpp): one row per hook kind, each written in step_hook_kinds.def.
#include "gpt2/train/hook_registry.hpp"

#include <cstdio>
#include <stdexcept>

#include "gpt2/train/api.hpp"

namespace gaugelab::gpt2 {

namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

const std::vector<StepHookRow>& step_hook_rows() {
  // GAUGELAB_STEP_HOOK(id, (flags...), describe): {StepHookKind::id, "id", {flags...}, describe}
#define GAUGELAB_STEP_FLAGS(...) {__VA_ARGS__}
#define GAUGELAB_STEP_HOOK(id, flags, ...) {StepHookKind::id, #id, GAUGELAB_STEP_FLAGS flags, __VA_ARGS__},
  static const std::vector<StepHookRow> rows = {
#include "gpt2/train/step_hook_kinds.def"
  };
#undef GAUGELAB_STEP_HOOK
#undef GAUGELAB_STEP_FLAGS
  return rows;
}

const StepHookRow& step_hook_row(StepHookKind kind) {
  for (const StepHookRow& r : step_hook_rows())
    if (r.kind == kind) return r;
  throw std::logic_error("step hook kind without a registry row");
}

}  // namespace gaugelab::gpt2
